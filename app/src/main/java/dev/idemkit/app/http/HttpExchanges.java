package dev.idemkit.app.http;

import com.sun.net.httpserver.HttpExchange;
import dev.idemkit.ports.service.Problems;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** What the app's HTTP handlers (the payments API, the console) do alike with a JDK {@link HttpExchange}. */
final class HttpExchanges {
    private HttpExchanges() {}

    /**
     * The query's parameters, decoded; a name given twice keeps its first value.
     *
     * @throws IllegalArgumentException for a malformed percent-escape
     */
    static Map<String, String> query(String raw) {
        Map<String, String> out = new LinkedHashMap<>();
        if (raw == null) {
            return out;
        }
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                out.putIfAbsent(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    /** The request body, or null when it is larger than {@code max} bytes (never more than that is read). */
    static byte[] body(HttpExchange ex, int max) throws IOException {
        try (InputStream in = ex.getRequestBody()) {
            byte[] body = in.readNBytes(max + 1);
            return body.length > max ? null : body;
        }
    }

    /**
     * Whether a Content-Type names JSON: {@code application/json} or a {@code +json} suffix, any parameters (a
     * charset) after a {@code ;}, case-insensitive. Null (no Content-Type) is not JSON.
     */
    static boolean isJson(String contentType) {
        if (contentType == null) {
            return false;
        }
        int semicolon = contentType.indexOf(';');
        String type = (semicolon < 0 ? contentType : contentType.substring(0, semicolon)).strip()
                .toLowerCase(java.util.Locale.ROOT);
        return type.equals("application/json") || (type.startsWith("application/") && type.endsWith("+json"));
    }

    /** Sends {@code status} with {@code body} (no body when empty); headers must be set before. */
    static void write(HttpExchange ex, int status, byte[] body) throws IOException {
        ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }

    /** An {@code application/problem+json} answer. */
    static void problem(HttpExchange ex, int status, String title, String type, String detail) throws IOException {
        var p = Problems.problem(status, title, type, detail);
        ex.getResponseHeaders().set("Content-Type", Problems.CONTENT_TYPE);
        write(ex, status, p.body());
    }
}
