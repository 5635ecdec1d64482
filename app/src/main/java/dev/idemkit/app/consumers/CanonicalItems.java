package dev.idemkit.app.consumers;

import dev.idemkit.app.json.CanonicalJson;
import java.util.List;

/** The items of an order as a JSON array. */
final class CanonicalItems {
    private CanonicalItems() {}

    static byte[] json(List<String> items) {
        var array = CanonicalJson.MAPPER.createArrayNode();
        items.forEach(array::add);
        return CanonicalJson.canonical(array);
    }
}
