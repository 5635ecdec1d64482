/** Driving ports: the use cases that the command line, the HTTP API and consumers call. */
package dev.idemkit.ports.in;
