/** Configuration: flags over environment variables over an optional properties file over defaults; one clear error per bad setting. */
package dev.idemkit.app.config;
