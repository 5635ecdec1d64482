package dev.idemkit.adapters.sqs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.maps;
import static org.quicktheories.generators.SourceDSL.strings;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/** Laws of the FIFO content deduplication id. */
class ContentDedupProperties {
    private static final Gen<Map<String, Integer>> OBJECTS = maps().of(
            strings().betweenCodePoints('a', 'z').ofLengthBetween(1, 6), integers().between(-1000, 1000))
            .ofSizeBetween(1, 8);

    /** Law: the same JSON object written with its keys in another order and other spacing has the same id. */
    @Test
    void keyOrderAndSpacingDoNotChangeTheId() {
        qt().withExamples(1000).forAll(OBJECTS).checkAssert(object -> {
            List<String> keys = new ArrayList<>(object.keySet());
            String compact = json(object, keys, "");
            Collections.reverse(keys);
            String spaced = json(object, keys, " \n");
            assertThat(ContentDedup.of(bytes(spaced))).isEqualTo(ContentDedup.of(bytes(compact)));
        });
    }

    /** Law: changing one field's value changes the id. */
    @Test
    void changingOneFieldChangesTheId() {
        qt().withExamples(1000).forAll(OBJECTS).checkAssert(object -> {
            List<String> keys = new ArrayList<>(object.keySet());
            Map<String, Integer> changed = new java.util.HashMap<>(object);
            changed.merge(keys.get(0), 1, Integer::sum);
            assertThat(ContentDedup.of(bytes(json(changed, keys, ""))))
                    .isNotEqualTo(ContentDedup.of(bytes(json(object, keys, ""))));
        });
    }

    private static String json(Map<String, Integer> object, List<String> order, String space) {
        StringBuilder out = new StringBuilder("{").append(space);
        for (int i = 0; i < order.size(); i++) {
            if (i > 0) {
                out.append(',').append(space);
            }
            out.append('"').append(order.get(i)).append("\":").append(space).append(object.get(order.get(i)));
        }
        return out.append(space).append('}').toString();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
