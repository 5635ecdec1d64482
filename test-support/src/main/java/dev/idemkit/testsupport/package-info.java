/**
 * Test fixtures shared by the modules' tests: real engines (PostgreSQL schemas, RabbitMQ names, vhosts and clusters,
 * a private Redis), child JVMs and their kills, commands with a bound. Nothing here is a mock: every fixture drives a
 * real server or a real process, and cleans up what it made.
 */
package dev.idemkit.testsupport;
