/**
 * The seed's consumers: {@code orders.placed} reserves inventory (one {@code inventory_reservations}
 * row per order) and {@code accounts.credit} credits a balance ({@code balance += amount}), with their
 * message formats and their effects per store.
 */
package dev.idemkit.app.consumers;
