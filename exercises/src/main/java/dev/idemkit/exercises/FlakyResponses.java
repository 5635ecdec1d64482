package dev.idemkit.exercises;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpPrincipal;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Exercise 2's lost and late answers, as a decorator around any HTTP handler: the handler runs in full (the charge
 * commits), then its response is held back {@link #DELAY} (longer than the client's attempt timeout: the client gives
 * up on it) or dropped (the connection closes with no answer). Only requests whose Idempotency-Key starts with the
 * prefix are touched: the first response for two of every three keys meets one of the two in turn, every later one
 * a drop with probability 0.15 or a delay with 0.15.
 */
final class FlakyResponses {
    static final Duration DELAY = Duration.ofSeconds(1);

    private enum Fault { NONE, DELAY, DROP }

    private final String prefix;
    private final SplittableRandom random;
    private final Map<String, Boolean> seen = new ConcurrentHashMap<>();
    private final AtomicInteger turn = new AtomicInteger();
    private final AtomicInteger delayed = new AtomicInteger();
    private final AtomicInteger dropped = new AtomicInteger();

    FlakyResponses(String keyPrefix, long seed) {
        this.prefix = keyPrefix;
        this.random = new SplittableRandom(seed);
    }

    HttpHandler around(HttpHandler inner) {
        return exchange -> {
            Fault fault = faultFor(exchange.getRequestHeaders().getFirst("Idempotency-Key"));
            if (fault == Fault.NONE) {
                inner.handle(exchange);
                return;
            }
            Captured captured = new Captured(exchange);
            inner.handle(captured);
            if (fault == Fault.DELAY) {
                delayed.incrementAndGet();
                Waiting.pause(DELAY);
                captured.replay();
            } else {
                dropped.incrementAndGet();
                exchange.close(); // no status line, no body: the client sees the connection end
            }
        };
    }

    private Fault faultFor(String key) {
        if (key == null || !key.startsWith(prefix)) {
            return Fault.NONE;
        }
        if (seen.putIfAbsent(key, Boolean.TRUE) == null) {
            return switch (turn.getAndIncrement() % 3) {
                case 1 -> Fault.DELAY;
                case 2 -> Fault.DROP;
                default -> Fault.NONE;
            };
        }
        double p;
        synchronized (random) {
            p = random.nextDouble();
        }
        return p < 0.15 ? Fault.DROP : p < 0.3 ? Fault.DELAY : Fault.NONE;
    }

    int delayed() {
        return delayed.get();
    }

    int dropped() {
        return dropped.get();
    }

    /** An exchange whose response is kept in memory until {@link #replay()} sends it on the real one. */
    private static final class Captured extends HttpExchange {
        private final HttpExchange real;
        private final Headers responseHeaders = new Headers();
        private final ByteArrayOutputStream body = new ByteArrayOutputStream();
        private int status = -1;

        Captured(HttpExchange real) {
            this.real = real;
        }

        void replay() throws IOException {
            try (real) {
                real.getResponseHeaders().putAll(responseHeaders);
                byte[] bytes = body.toByteArray();
                real.sendResponseHeaders(status < 0 ? 500 : status, bytes.length == 0 ? -1 : bytes.length);
                if (bytes.length > 0) {
                    try (OutputStream out = real.getResponseBody()) {
                        out.write(bytes);
                    }
                }
            }
        }

        @Override
        public Headers getRequestHeaders() {
            return real.getRequestHeaders();
        }

        @Override
        public Headers getResponseHeaders() {
            return responseHeaders;
        }

        @Override
        public URI getRequestURI() {
            return real.getRequestURI();
        }

        @Override
        public String getRequestMethod() {
            return real.getRequestMethod();
        }

        @Override
        public HttpContext getHttpContext() {
            return real.getHttpContext();
        }

        @Override
        public void close() {
            // the real exchange is closed by replay() or by the drop
        }

        @Override
        public InputStream getRequestBody() {
            return real.getRequestBody();
        }

        @Override
        public OutputStream getResponseBody() {
            return body;
        }

        @Override
        public void sendResponseHeaders(int rCode, long responseLength) {
            this.status = rCode;
        }

        @Override
        public InetSocketAddress getRemoteAddress() {
            return real.getRemoteAddress();
        }

        @Override
        public int getResponseCode() {
            return status;
        }

        @Override
        public InetSocketAddress getLocalAddress() {
            return real.getLocalAddress();
        }

        @Override
        public String getProtocol() {
            return real.getProtocol();
        }

        @Override
        public Object getAttribute(String name) {
            return real.getAttribute(name);
        }

        @Override
        public void setAttribute(String name, Object value) {
            real.setAttribute(name, value);
        }

        @Override
        public void setStreams(InputStream i, OutputStream o) {
            throw new UnsupportedOperationException("streams of a captured exchange cannot be replaced");
        }

        @Override
        public HttpPrincipal getPrincipal() {
            return real.getPrincipal();
        }
    }
}
