package dev.idemkit.adapters.redis;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;

/**
 * One administrative command over a plain socket (RESP), as the default user, for what Redisson cannot send or
 * a script cannot run ({@code ACL}, {@code CLIENT KILL}). Answers a simple or bulk string reply as text.
 */
final class RawRedis {
    private RawRedis() {}

    static String command(RedisSettings settings, String... args) throws IOException {
        URI uri = URI.create(settings.addresses().get(0));
        try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            if (!settings.password().isEmpty()) {
                write(out, "AUTH", settings.password());
                reply(in);
            }
            write(out, args);
            return reply(in);
        }
    }

    private static void write(OutputStream out, String... args) throws IOException {
        StringBuilder resp = new StringBuilder("*" + args.length + "\r\n");
        for (String a : args) {
            resp.append('$').append(a.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(a).append("\r\n");
        }
        out.write(resp.toString().getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static String reply(InputStream in) throws IOException {
        String first = line(in);
        if (!first.startsWith("$") || first.equals("$-1")) {
            return first;
        }
        byte[] bulk = in.readNBytes(Integer.parseInt(first.substring(1)) + 2);
        return new String(bulk, 0, bulk.length - 2, StandardCharsets.UTF_8);
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b; (b = in.read()) != -1 && b != '\n'; ) {
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.UTF_8);
    }
}
