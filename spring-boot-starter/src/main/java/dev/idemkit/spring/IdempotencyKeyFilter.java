package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.JoinedUnitOfWork;
import dev.idemkit.domain.InvalidKeyException;
import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.domain.httpkey.IdempotencyKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.in.IdempotentRequests;
import dev.idemkit.ports.out.EffectFailedException;
import dev.idemkit.ports.service.Problems;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.server.PathContainer;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ContentCachingResponseWrapper;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The Idempotency-Key protocol in front of Spring MVC endpoints, with the semantics of idemkit's payments API (the
 * ports' {@code IdempotentRequestService}): for a matching method and path, the request runs once per (client, key);
 * a retry with the same body waits for the first and replays its stored response byte for byte (with
 * {@code Idempotent-Replayed: true}); another body under the same key is a 422, a malformed key a 400, a key still
 * held past the wait bound a 409 with {@code Retry-After}, all {@code application/problem+json}. The client is the
 * authenticated principal or, when configured, a request header (as {@code header:<value>}, never the same client
 * as a principal of that name); a request with neither is refused (401): keys are never shared between clients. The
 * fingerprint is the method, the path and the body's bytes; form and multipart bodies are refused (415).
 *
 * <p>Not stored, given to the client as they are, the key left free: an error the handler sent with
 * {@code sendError} (rendered by the error page afterwards), and any answer of a handler whose transaction can no
 * longer commit (rollback-only or aborted; a 2xx or 3xx of such a handler becomes a 500, since nothing of it was
 * kept). Asynchronous handlers are refused (500).
 *
 * <p>Stored and replayed: the status, the body, {@code Content-Type} and {@code Location}; never another header
 * (cookies and credentials included). A 5xx or an exception is not stored, and the key is free again.
 */
final class IdempotencyKeyFilter extends OncePerRequestFilter {
    private static final Logger LOG = LoggerFactory.getLogger(IdempotencyKeyFilter.class);
    static final String HEADER = "Idempotency-Key";
    static final String REPLAYED = "Idempotent-Replayed";
    private static final List<String> STORED_HEADERS = List.of("Content-Type", "Location");
    static final String ASYNC_REFUSED = "asynchronous handlers (Callable, DeferredResult, ...) are not supported on"
            + " idemkit.http.paths: their work would run outside the Idempotency-Key claim's transaction";

    private final IdempotentRequests<JoinedUnitOfWork> requests;
    private final List<PathPattern> paths;
    private final Set<String> methods;
    private final String clientHeader;
    private final BooleanSupplier transactionDoomed;
    private final int maxBodyBytes;

    IdempotencyKeyFilter(IdempotentRequests<JoinedUnitOfWork> requests, List<String> paths, Set<String> methods,
            String clientHeader, BooleanSupplier transactionDoomed, int maxBodyBytes) {
        this.requests = Objects.requireNonNull(requests, "requests");
        if (maxBodyBytes < 1) {
            throw new IllegalArgumentException("maxBodyBytes must be at least 1, got " + maxBodyBytes);
        }
        this.maxBodyBytes = maxBodyBytes;
        this.transactionDoomed = Objects.requireNonNull(transactionDoomed, "transactionDoomed");
        PathPatternParser parser = new PathPatternParser();
        this.paths = paths.stream().map(parser::parse).toList();
        this.methods = Set.copyOf(methods);
        this.clientHeader = clientHeader == null || clientHeader.isBlank() ? null : clientHeader;
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        if (!methods.contains(request.getMethod())) {
            return true;
        }
        PathContainer path = PathContainer.parsePath(pathOf(request));
        return paths.stream().noneMatch(p -> p.matches(path));
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        ClientId client;
        try {
            client = client(request);
        } catch (InvalidKeyException e) {
            write(response, Problems.badRequest("invalid client identity: " + e.getMessage()), false);
            return;
        }
        if (client == null) {
            write(response, Problems.problem(401, "Unauthorized", "unknown-client", "an Idempotency-Key is kept per client:"
                    + " this request has no authenticated principal" + (clientHeader == null ? "" : " nor a "
                    + clientHeader + " header")), false);
            return;
        }
        String contentType = request.getContentType();
        if (contentType != null && (contentType.toLowerCase(java.util.Locale.ROOT).startsWith(
                "application/x-www-form-urlencoded") || contentType.toLowerCase(java.util.Locale.ROOT)
                        .startsWith("multipart/"))) {
            // form parameters may already have been read by another filter, and would not be served again from the
            // bytes: refused rather than fingerprinted wrongly
            write(response, Problems.unsupportedMediaType("idemkit's Idempotency-Key protocol takes request bodies as"
                    + " bytes (JSON and the like), not forms: " + contentType), false);
            return;
        }
        // the body is buffered to fingerprint it and to serve it again: at most maxBodyBytes, refused before reading
        // when the declared length is larger, and refused once one byte more has arrived when it is not declared
        byte[] body = request.getContentLengthLong() > maxBodyBytes ? null
                : request.getInputStream().readNBytes(maxBodyBytes + 1);
        if (body == null || body.length > maxBodyBytes) {
            write(response, Problems.bodyTooLarge(maxBodyBytes, "idemkit.http.max-body-size"), false);
            return;
        }
        HttpServletRequest replayable = new CachedBodyRequest(request, body);
        // every field line: two of them are a list, which the key parser refuses (400), never the first one alone
        java.util.Enumeration<String> lines = request.getHeaders(HEADER);
        IdempotentRequests.Request r = new IdempotentRequests.Request(client,
                IdempotencyKey.combineFieldLines(lines == null ? null : java.util.Collections.list(lines)),
                request.getMethod(), pathOf(request), body);
        IdempotentRequests.Reply reply;
        try {
            reply = requests.handle(r, work -> {
                Captured captured = new Captured(response);
                chain.doFilter(replayable, captured); // the handler joins the claim's transaction
                if (request.isAsyncStarted()) {
                    throw new IllegalStateException("an asynchronous handler (Callable, DeferredResult, ...) answered "
                            + request.getRequestURI() + ": idemkit's Idempotency-Key protocol needs the response before"
                            + " the claim's transaction ends; not supported on idemkit.http.paths");
                }
                if (captured.errorStatus != null) { // sendError: the error page renders it after this transaction
                    throw new UnstoredAnswer(null, captured.errorStatus, captured.errorMessage);
                }
                StoredResponse answer = stored(captured);
                if (transactionDoomed.getAsBoolean()) { // rollback-only or aborted: nothing of it can commit
                    throw new UnstoredAnswer(answer.status() < 400 ? Problems.problem(500, "Internal Server Error",
                            "answer-not-kept", "the handler answered " + answer.status() + " but its transaction was rolled"
                            + " back: nothing was kept; retry with the same Idempotency-Key") : answer, null, null);
                }
                return answer;
            });
        } catch (UnstoredAnswer answer) { // given to the client as it is, not kept: the key is free
            if (answer.errorStatus != null) {
                response.sendError(answer.errorStatus, answer.errorMessage);
            } else {
                write(response, answer.response, false);
            }
            return;
        } catch (EffectFailedException e) { // the handler threw: nothing was kept, the key is free
            if (e.getCause() instanceof ServletException s) {
                throw s;
            }
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw e;
        }
        write(response, reply.response(), reply.replayed());
    }

    private ClientId client(HttpServletRequest request) {
        Principal principal = request.getUserPrincipal();
        if (principal != null && principal.getName() != null) {
            return ClientId.of(principal.getName());
        }
        String header = clientHeader == null ? null : request.getHeader(clientHeader);
        // a namespace of its own: a header naming "alice" is not the authenticated principal alice
        return header == null || header.isBlank() ? null : ClientId.of("header:" + header);
    }

    private static String pathOf(HttpServletRequest request) {
        String uri = request.getRequestURI();
        String context = request.getContextPath();
        return context != null && !context.isEmpty() && uri.startsWith(context) ? uri.substring(context.length()) : uri;
    }

    private static StoredResponse stored(ContentCachingResponseWrapper captured) {
        Map<String, String> headers = new LinkedHashMap<>();
        if (captured.getContentType() != null) {
            headers.put("Content-Type", captured.getContentType());
        }
        for (String name : STORED_HEADERS) {
            String value = captured.getHeader(name);
            if (value != null) {
                headers.putIfAbsent(name, value);
            }
        }
        return new StoredResponse(captured.getStatus(), headers, captured.getContentAsByteArray());
    }

    private static void write(HttpServletResponse response, StoredResponse stored, boolean replayed) throws IOException {
        if (response.isCommitted()) {
            LOG.error("idempotency-key: the handler committed the response itself (flushed it); the stored answer was"
                    + " not written again");
            return;
        }
        response.resetBuffer();
        response.setStatus(stored.status());
        stored.headers().forEach(response::setHeader);
        if (stored.status() == 409) {
            response.setHeader("Retry-After", "1");
        }
        if (replayed) {
            response.setHeader(REPLAYED, "true");
        }
        byte[] body = stored.body();
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
        response.flushBuffer();
    }

    /** A handler's answer that is given to the client but never stored under the key. */
    private static final class UnstoredAnswer extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient StoredResponse response;
        private final Integer errorStatus;
        private final String errorMessage;

        UnstoredAnswer(StoredResponse response, Integer errorStatus, String errorMessage) {
            super("unstored answer", null, false, false);
            this.response = response;
            this.errorStatus = errorStatus;
            this.errorMessage = errorMessage;
        }
    }

    /** The handler's response, kept in memory; an error sent with sendError is recorded, not sent yet. */
    private static final class Captured extends ContentCachingResponseWrapper {
        private Integer errorStatus;
        private String errorMessage;

        Captured(HttpServletResponse response) {
            super(response);
        }

        @Override
        public void sendError(int status) {
            errorStatus = status;
        }

        @Override
        public void sendError(int status, String message) {
            errorStatus = status;
            errorMessage = message;
        }
    }

    /** The request with its body read once and served again to the handler. */
    private static final class CachedBodyRequest extends HttpServletRequestWrapper {
        private final byte[] body;

        CachedBodyRequest(HttpServletRequest request, byte[] body) {
            super(request);
            this.body = body;
        }

        @Override
        public ServletInputStream getInputStream() {
            ByteArrayInputStream in = new ByteArrayInputStream(body);
            return new ServletInputStream() {
                @Override
                public boolean isFinished() {
                    return in.available() == 0;
                }

                @Override
                public boolean isReady() {
                    return true;
                }

                @Override
                public void setReadListener(ReadListener listener) {
                    throw new UnsupportedOperationException("the body is already in memory");
                }

                @Override
                public int read() {
                    return in.read();
                }

                @Override
                public int read(byte[] b, int off, int len) {
                    return in.read(b, off, len);
                }
            };
        }

        @Override
        public BufferedReader getReader() {
            String encoding = getCharacterEncoding();
            return new BufferedReader(new InputStreamReader(getInputStream(),
                    encoding == null ? StandardCharsets.UTF_8 : java.nio.charset.Charset.forName(encoding)));
        }

        /**
         * No asynchronous processing behind the protocol: Spring MVC refuses an async handler before it hands the work
         * to another thread (which would run outside the claim's transaction, after the response was stored).
         */
        @Override
        public boolean isAsyncSupported() {
            return false;
        }

        @Override
        public jakarta.servlet.AsyncContext startAsync() {
            throw new IllegalStateException(ASYNC_REFUSED);
        }

        @Override
        public jakarta.servlet.AsyncContext startAsync(jakarta.servlet.ServletRequest request,
                jakarta.servlet.ServletResponse response) {
            throw new IllegalStateException(ASYNC_REFUSED);
        }

        @Override
        public int getContentLength() {
            return body.length;
        }

        @Override
        public long getContentLengthLong() {
            return body.length;
        }
    }
}
