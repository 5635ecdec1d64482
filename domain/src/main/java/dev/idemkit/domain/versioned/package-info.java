/**
 * The versioned strategy: an aggregate's state is replaced only by an event carrying a strictly newer
 * monotonic version ({@code UPDATE ... WHERE version < :v}); duplicates and older events are no-ops.
 */
package dev.idemkit.domain.versioned;
