package dev.idemkit.app.http;

import com.sun.net.httpserver.HttpHandler;
import dev.idemkit.app.config.AppSettings.HttpLimits;
import dev.idemkit.ports.service.Problems;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a JDK {@link HttpHandler} only on a request that has arrived whole: the body is read without a thread (Jetty
 * demands it from the selector) up to {@link HttpLimits#maxBodyBytes()} (413 past it, before a byte of it when the
 * Content-Length says so) and within {@link HttpLimits#bodyTimeout()} (408 and the connection closed after it); the
 * handler then runs on a worker with the body in memory, and its response, collected in memory, is written without a
 * thread. So a worker waits for no client: slow senders and slow readers hold a connection, never a worker.
 */
final class WholeRequests extends Handler.Abstract {
    private static final Logger LOG = LoggerFactory.getLogger(WholeRequests.class);

    private final HttpHandler handler;
    private final HttpLimits limits;
    private final Scheduler scheduler;
    private final Executor workers;

    WholeRequests(HttpHandler handler, HttpLimits limits, Scheduler scheduler, Executor workers) {
        this.handler = handler;
        this.limits = limits;
        this.scheduler = scheduler;
        this.workers = workers;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        long declared = request.getLength();
        if (declared > limits.maxBodyBytes()) {
            tooLarge(request, response, callback);
            return true;
        }
        AtomicBoolean answered = new AtomicBoolean();
        Scheduler.Task deadline = scheduler.schedule(() -> {
            if (answered.compareAndSet(false, true)) {
                LOG.debug("request body not complete within {}: 408", limits.bodyTimeout());
                response.getHeaders().put(HttpHeader.CONNECTION, "close");
                Response.writeError(request, response, callback, 408, "The request body did not arrive within "
                        + limits.bodyTimeout().toMillis() + " ms.");
            }
        }, limits.bodyTimeout().toMillis(), TimeUnit.MILLISECONDS);
        CompletableFuture<byte[]> body = Content.Source.asByteArrayAsync(request, limits.maxBodyBytes());
        if (body.isDone()) { // the usual case: a small body came with the headers; this thread is a worker already
            arrived(request, response, callback, body, answered, deadline);
        } else {
            body.whenComplete((bytes, failure) -> workers.execute(
                    () -> arrived(request, response, callback, body, answered, deadline)));
        }
        return true;
    }

    private void arrived(Request request, Response response, Callback callback, CompletableFuture<byte[]> body,
            AtomicBoolean answered, Scheduler.Task deadline) {
        deadline.cancel();
        if (!answered.compareAndSet(false, true)) {
            return; // 408 already
        }
        byte[] bytes;
        try {
            bytes = body.join();
        } catch (RuntimeException e) {
            if (e.getCause() instanceof IllegalArgumentException) { // asByteArrayAsync: more than maxBodyBytes
                tooLarge(request, response, callback);
            } else {
                callback.failed(e.getCause() == null ? e : e.getCause()); // the client went away or timed out idle
            }
            return;
        }
        run(request, response, callback, bytes);
    }

    private void run(Request request, Response response, Callback callback, byte[] body) {
        BufferedExchange ex;
        try {
            ex = new BufferedExchange(request, body);
        } catch (IllegalArgumentException e) {
            problem(request, response, callback, Problems.problem(400, "Bad Request", "invalid-request-target",
                    "The request target is not a URI."));
            return;
        }
        try {
            handler.handle(ex);
        } catch (Exception | Error e) {
            LOG.error("request failed: {}", e.toString());
            if (ex.status() == -1) {
                problem(request, response, callback, Problems.problem(500, "Internal Server Error", "internal",
                        "The request failed; retry it."));
                return;
            }
        }
        if (ex.status() == -1) {
            problem(request, response, callback, Problems.problem(500, "Internal Server Error", "internal",
                    "The request was not answered; retry it."));
            return;
        }
        response.setStatus(ex.status());
        for (Map.Entry<String, List<String>> header : ex.getResponseHeaders().entrySet()) {
            for (String value : header.getValue()) {
                response.getHeaders().add(header.getKey(), value);
            }
        }
        response.write(true, ByteBuffer.wrap(ex.responseBody()), callback);
    }

    private void tooLarge(Request request, Response response, Callback callback) {
        response.getHeaders().put(HttpHeader.CONNECTION, "close"); // the rest of the body is not read
        problem(request, response, callback, Problems.bodyTooLarge(limits.maxBodyBytes(), "the server's"
                + " http.max-body-bytes"));
    }

    private static void problem(Request request, Response response, Callback callback,
            dev.idemkit.domain.httpkey.StoredResponse problem) {
        response.setStatus(problem.status());
        problem.headers().forEach(response.getHeaders()::put);
        response.write(true, ByteBuffer.wrap(problem.body()), callback);
    }
}
