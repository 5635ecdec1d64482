package dev.idemkit.app.http;

import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.StoredResponse;
import java.time.Duration;
import java.util.TreeSet;

/**
 * The published Idempotency-Key policy. The IETF draft (section "Idempotency Key Validity and Expiry") says a resource
 * that expires keys SHOULD publish its expiration policy in its documentation; this page is that documentation, with
 * the numbers the running server uses, and every Idempotency-Key problem links to it ({@code rel="describedby"}).
 */
final class IdempotencyPolicyPage {
    private IdempotencyPolicyPage() {}

    static String html(KeyPolicy policy) {
        return """
                <!doctype html>
                <html lang="en"><head><meta charset="utf-8"><title>Idempotency-Key policy</title></head><body>
                <h1>Idempotency-Key policy</h1>
                <p>Send <code>Idempotency-Key: "&lt;key&gt;"</code> (a structured-field string, 1 to 255 visible ASCII
                characters) with every <code>POST /payments</code>. Keys are scoped per API client. Send it once: two
                <code>Idempotency-Key</code> lines, or a comma outside the quotes, are a list and answered 400.</p>
                <h2>Expiry</h2>
                <ul>
                <li>A completed request's response (status, body byte for byte, %s) is kept for <b>%s</b> after it
                completed; within that time the same key and the same request replay it with
                <code>Idempotent-Replayed: true</code>. After it, the key is forgotten and the same key starts a new
                request.</li>
                <li>A request still running holds its key for at most <b>%s</b> (its lease); a server that crashed
                mid-request frees the key after that, and the client's retry runs.</li>
                <li>A server error (5xx) is never kept: the key is freed so that a retry can run.</li>
                </ul>
                <h2>Errors (<code>application/problem+json</code>)</h2>
                <ul>
                <li><b>400</b> <code>invalid-idempotency-key</code>: the header is missing or malformed.</li>
                <li><b>409</b> <code>request-in-progress</code>: a request with this key is still running after
                waiting up to %s for it; retry after <code>Retry-After</code> seconds.</li>
                <li><b>422</b> <code>idempotency-key-reused</code>: the key was used for another request (method, path
                or body).</li>
                <li><b>500</b> <code>idempotency-claim-lost</code>: the request outlived its lease and lost its key;
                retry with the same key to get the key's answer.</li>
                </ul>
                <p>Never stored or replayed, whatever the handler set: %s.</p>
                </body></html>
                """.formatted("the headers Content-Type and Location", human(policy.ttl()), human(policy.lease()),
                human(policy.waitBound()), String.join(", ", new TreeSet<>(StoredResponse.NEVER_STORED)));
    }

    static String human(Duration d) {
        if (d.toSeconds() % 3600 == 0 && d.toHours() > 0) {
            return d.toHours() + (d.toHours() == 1 ? " hour" : " hours");
        }
        if (d.toSeconds() % 60 == 0 && d.toMinutes() > 0) {
            return d.toMinutes() + (d.toMinutes() == 1 ? " minute" : " minutes");
        }
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }
}
