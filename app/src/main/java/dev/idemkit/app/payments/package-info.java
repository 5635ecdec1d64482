/** The payments example behind {@code POST /payments}: the request, the charge, and where charges are kept. */
package dev.idemkit.app.payments;
