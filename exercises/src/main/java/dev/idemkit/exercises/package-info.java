/**
 * The source document's five exercises as runnable checks over the ports: each prints its criteria as PASS or FAIL
 * with the measured numbers. What an exercise needs from a concrete engine (a broker, the store's effect, the payments
 * API, a movable SQS clock) is handed to it through {@link dev.idemkit.exercises.Workbench}; faults are decorators
 * the exercise wraps around what it is handed.
 */
package dev.idemkit.exercises;
