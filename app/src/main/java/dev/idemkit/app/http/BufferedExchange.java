package dev.idemkit.app.http;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpPrincipal;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.server.Request;

/**
 * A JDK {@link HttpExchange} over a request that has arrived whole (its body in memory) and a response that is
 * collected in memory, so the app's handlers ({@link PaymentsApi}, {@link OperatorConsole}) run unchanged on Jetty and
 * never wait for a client's bytes, in either direction. As the JDK server does: one header value per field line (never
 * split at commas), the request URI as the request target (path and query), {@code sendResponseHeaders} once, with
 * {@code -1} meaning no body.
 */
final class BufferedExchange extends HttpExchange {
    private final Request request;
    private final Headers requestHeaders = new Headers();
    private final Headers responseHeaders = new Headers();
    private final URI uri;
    private final Map<String, Object> attributes = new HashMap<>();
    private InputStream body;
    private ByteArrayOutputStream collected = new ByteArrayOutputStream();
    private OutputStream out = collected;
    private int status = -1;

    /** @throws IllegalArgumentException when the request target is not a URI */
    BufferedExchange(Request request, byte[] body) {
        this.request = request;
        this.body = new ByteArrayInputStream(body);
        for (HttpField field : request.getHeaders()) {
            requestHeaders.add(field.getName(), field.getValue() == null ? "" : field.getValue());
        }
        this.uri = URI.create(request.getHttpURI().getPathQuery());
    }

    /** The status sent, or -1 when the handler sent none. */
    int status() {
        return status;
    }

    /** The body the handler wrote (none when it sent {@code -1} as the length). */
    byte[] responseBody() {
        return collected.toByteArray();
    }

    @Override
    public Headers getRequestHeaders() {
        return requestHeaders;
    }

    @Override
    public Headers getResponseHeaders() {
        return responseHeaders;
    }

    @Override
    public URI getRequestURI() {
        return uri;
    }

    @Override
    public String getRequestMethod() {
        return request.getMethod();
    }

    @Override
    public HttpContext getHttpContext() {
        return null; // one handler serves every path: there are no contexts
    }

    @Override
    public void close() {
        // the response goes out when the handler returns (WholeRequests)
    }

    @Override
    public InputStream getRequestBody() {
        return body;
    }

    @Override
    public OutputStream getResponseBody() {
        return out;
    }

    @Override
    public void sendResponseHeaders(int rCode, long responseLength) throws IOException {
        if (status != -1) {
            throw new IOException("headers already sent");
        }
        status = rCode;
        if (responseLength == -1) {
            collected = new ByteArrayOutputStream(0);
            out = OutputStream.nullOutputStream();
        }
    }

    @Override
    public InetSocketAddress getRemoteAddress() {
        return inet(request.getConnectionMetaData().getRemoteSocketAddress());
    }

    @Override
    public InetSocketAddress getLocalAddress() {
        return inet(request.getConnectionMetaData().getLocalSocketAddress());
    }

    private static InetSocketAddress inet(SocketAddress address) {
        return address instanceof InetSocketAddress inet ? inet : null;
    }

    @Override
    public int getResponseCode() {
        return status;
    }

    @Override
    public String getProtocol() {
        return request.getConnectionMetaData().getProtocol();
    }

    @Override
    public Object getAttribute(String name) {
        return attributes.get(name);
    }

    @Override
    public void setAttribute(String name, Object value) {
        attributes.put(name, value);
    }

    @Override
    public void setStreams(InputStream i, OutputStream o) {
        if (i != null) {
            body = i;
        }
        if (o != null) {
            out = o;
        }
    }

    @Override
    public HttpPrincipal getPrincipal() {
        return null; // authentication is the handlers' own (bearer keys)
    }
}
