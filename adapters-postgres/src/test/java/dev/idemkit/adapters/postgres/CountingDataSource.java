package dev.idemkit.adapters.postgres;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Test data source over the real pool: counts connections handed out and statements prepared (to
 * prove that bad input reached no SQL) and can simulate an outage. Not a mock: every call goes to
 * the real PostgreSQL.
 */
final class CountingDataSource implements DataSource {
    private final DataSource real;
    private final AtomicLong connections = new AtomicLong();
    private final AtomicLong statements = new AtomicLong();
    private final AtomicBoolean down = new AtomicBoolean();

    CountingDataSource(DataSource real) {
        this.real = real;
    }

    long connections() {
        return connections.get();
    }

    long statements() {
        return statements.get();
    }

    void setDown(boolean isDown) {
        down.set(isDown);
    }

    @Override
    public Connection getConnection() throws SQLException {
        if (down.get()) {
            throw new SQLException("simulated outage: connection refused", "08001");
        }
        connections.incrementAndGet();
        Connection c = real.getConnection();
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    String name = method.getName();
                    if (name.equals("prepareStatement") || name.equals("createStatement") || name.equals("prepareCall")) {
                        statements.incrementAndGet();
                    }
                    try {
                        return method.invoke(c, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException("use getConnection()");
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return real.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        real.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        real.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return real.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return real.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return real.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return real.isWrapperFor(iface);
    }
}
