package dev.idemkit.app.http;

import com.sun.net.httpserver.HttpHandler;
import dev.idemkit.app.config.AppSettings.HttpLimits;
import java.io.IOException;
import java.net.InetSocketAddress;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * {@code serve}'s HTTP server: Jetty 12 (core API, HTTP/1.1) serving one JDK {@link HttpHandler} (the payments API
 * behind the console's routes) within {@link HttpLimits}, so that slow or idle clients cannot take the workers from
 * others (issue 29 item 6: on the JDK server 140 clients sending a body a byte a second held all 128 threads). Jetty
 * reads headers and bodies on its selector without a thread; {@link HeaderDeadlines} bounds the headers' total time,
 * {@link WholeRequests} the body's size and time and runs the handler once the request is whole; at most
 * {@code maxConnections} are open (a {@link NetworkConnectionLimit}: beyond it the acceptor pauses and new connections
 * wait in the backlog). Closes within seconds.
 */
public final class ApiServer implements AutoCloseable {
    private static final int BACKLOG = 512;

    private final Server server;
    private final ServerConnector connector;

    private ApiServer(Server server, ServerConnector connector) {
        this.server = server;
        this.connector = connector;
    }

    /**
     * Binds and starts with {@link HttpLimits#defaults()} (port 0 picks a free port).
     *
     * @throws IOException when the address is in use or cannot be bound
     */
    public static ApiServer start(InetSocketAddress address, HttpHandler handler) throws IOException {
        return start(address, handler, HttpLimits.defaults());
    }

    /**
     * Binds and starts within {@code limits} (port 0 picks a free port).
     *
     * @throws IOException when the address is in use or cannot be bound
     */
    public static ApiServer start(InetSocketAddress address, HttpHandler handler, HttpLimits limits)
            throws IOException {
        // workers, plus the acceptor and the selector, which Jetty takes from the same pool
        QueuedThreadPool threads = new QueuedThreadPool(limits.workers() + 2, Math.min(8, limits.workers() + 2));
        threads.setName("idemkit-http");
        threads.setDaemon(true);
        Server server = new Server(threads);
        server.setStopTimeout(1_000);
        HttpConfiguration config = new HttpConfiguration();
        config.setSendServerVersion(false);
        ServerConnector connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(config));
        connector.setHost(address.getAddress() == null ? null : address.getAddress().getHostAddress());
        connector.setPort(address.getPort());
        connector.setAcceptQueueSize(BACKLOG);
        connector.setIdleTimeout(limits.idleTimeout().toMillis());
        server.addConnector(connector);
        NetworkConnectionLimit connections = new NetworkConnectionLimit(limits.maxConnections(), connector);
        // while at the bound, connections that go silent make room sooner
        connections.setEndPointIdleTimeout(limits.headerTimeout().toMillis());
        server.addBean(connections);
        HeaderDeadlines deadlines = new HeaderDeadlines(limits.headerTimeout(), server.getScheduler());
        connector.addBean(deadlines); // a Connection.Listener of every connection, started with the connector
        server.setHandler(tracked(new WholeRequests(handler, limits, server.getScheduler(), threads), deadlines));
        try {
            server.start();
        } catch (Exception e) {
            stopQuietly(server);
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof java.net.BindException bind) {
                    throw bind; // serve names the port
                }
            }
            throw e instanceof IOException io ? io : new IOException("the HTTP server did not start: " + e, e);
        }
        return new ApiServer(server, connector);
    }

    /** Tells {@code deadlines} when a request's headers have arrived and when its response is out. */
    private static Handler tracked(Handler next, HeaderDeadlines deadlines) {
        return new Handler.Wrapper(next) {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                Connection connection = request.getConnectionMetaData().getConnection();
                deadlines.headersArrived(connection);
                return super.handle(request, response, new Callback() {
                    @Override
                    public void succeeded() {
                        deadlines.answered(connection);
                        callback.succeeded();
                    }

                    @Override
                    public void failed(Throwable x) {
                        deadlines.answered(connection);
                        callback.failed(x);
                    }

                    @Override
                    public InvocationType getInvocationType() {
                        return callback.getInvocationType();
                    }
                });
            }
        };
    }

    public int port() {
        return connector.getLocalPort();
    }

    @Override
    public void close() {
        stopQuietly(server);
    }

    private static void stopQuietly(Server server) {
        try {
            server.stop();
        } catch (Exception e) {
            // stopping is best effort: the port is released with the process at the latest
        }
    }
}
