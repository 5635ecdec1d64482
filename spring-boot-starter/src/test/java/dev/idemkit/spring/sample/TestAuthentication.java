package dev.idemkit.spring.sample;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.IOException;
import java.security.Principal;
import org.springframework.core.Ordered;
import org.springframework.stereotype.Component;

/**
 * The sample's stand-in for authentication (Spring Security or a gateway would do this): the user named by the
 * {@code X-Test-User} header becomes the request's principal, before any other filter.
 */
@Component
public class TestAuthentication implements Filter, Ordered {
    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest http = (HttpServletRequest) request;
        String user = http.getHeader("X-Test-User");
        if (user == null) {
            chain.doFilter(request, response);
            return;
        }
        Principal principal = () -> user;
        chain.doFilter(new HttpServletRequestWrapper(http) {
            @Override
            public Principal getUserPrincipal() {
                return principal;
            }
        }, response);
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
