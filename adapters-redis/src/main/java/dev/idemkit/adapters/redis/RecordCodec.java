package dev.idemkit.adapters.redis;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.StoredResponse;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** Record fields to and from bytes. Headers: {@code <len>:<name><len>:<value>...} in UTF-8, sorted by name. */
final class RecordCodec {
    /** The fence of an in-progress record written before fences existed: no caller holds it. */
    static final String LEGACY_FENCE = "(none: written before fences)";

    private RecordCodec() {}

    static byte[] text(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] headers(Map<String, String> headers) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new TreeMap<>(headers).forEach((name, value) -> {
            for (String part : new String[] {name, value}) {
                byte[] bytes = text(part);
                out.writeBytes(text(bytes.length + ":"));
                out.writeBytes(bytes);
            }
        });
        return out.toByteArray();
    }

    static Map<String, String> headers(byte[] encoded) {
        Map<String, String> headers = new HashMap<>();
        int i = 0;
        String name = null;
        while (i < encoded.length) {
            int colon = i;
            while (encoded[colon] != ':') {
                colon++;
            }
            int length = Integer.parseInt(new String(encoded, i, colon - i, StandardCharsets.US_ASCII));
            String part = new String(encoded, colon + 1, length, StandardCharsets.UTF_8);
            i = colon + 1 + length;
            if (name == null) {
                name = part;
            } else {
                headers.put(name, part);
                name = null;
            }
        }
        return headers;
    }

    /** The record from an HGETALL reply (alternating field names and values); empty for an empty reply. */
    static Optional<KeyRecord> decode(List<?> flat) {
        return decode(flat, 0);
    }

    /** As {@link #decode(List)}, the fields starting at {@code from} (after a leading verdict). */
    static Optional<KeyRecord> decode(List<?> flat, int from) {
        if (flat == null || flat.size() <= from) {
            return Optional.empty();
        }
        Map<String, byte[]> f = new HashMap<>();
        for (int i = from; i + 1 < flat.size(); i += 2) {
            f.put(new String((byte[]) flat.get(i), StandardCharsets.UTF_8), (byte[]) flat.get(i + 1));
        }
        Fingerprint fingerprint = new Fingerprint(str(f, "f"));
        Instant created = Instant.ofEpochSecond(Long.parseLong(str(f, "cs")), Long.parseLong(str(f, "cn")));
        Instant expires = Instant.ofEpochSecond(Long.parseLong(str(f, "es")), Long.parseLong(str(f, "en")));
        if ("C".equals(str(f, "s"))) {
            StoredResponse response = new StoredResponse(Integer.parseInt(str(f, "st")), headers(f.get("h")), f.get("b"));
            return Optional.of(new KeyRecord.Completed(fingerprint, response, created, expires));
        }
        byte[] fence = f.get("g");
        return Optional.of(new KeyRecord.InProgress(fingerprint, created, expires,
                fence == null ? LEGACY_FENCE : new String(fence, StandardCharsets.UTF_8)));
    }

    private static String str(Map<String, byte[]> fields, String name) {
        byte[] v = fields.get(name);
        if (v == null) {
            throw new IllegalStateException("record field " + name + " is missing");
        }
        return new String(v, StandardCharsets.UTF_8);
    }
}
