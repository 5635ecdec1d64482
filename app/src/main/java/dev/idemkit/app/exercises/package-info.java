/** The source document's five exercises, runnable end to end, each printing its criteria as PASS/FAIL with the measured numbers. */
package dev.idemkit.app.exercises;
