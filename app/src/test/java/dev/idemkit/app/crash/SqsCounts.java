package dev.idemkit.app.crash;

import java.net.URI;
import java.util.Map;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/** A plain SQS client on a local endpoint, for what a test counts beside the adapter. */
final class SqsCounts implements AutoCloseable {
    private final SqsClient sqs;

    SqsCounts(URI endpoint) {
        this.sqs = SqsClient.builder().endpointOverride(endpoint).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("idemkit", "idemkit")))
                .httpClient(UrlConnectionHttpClient.create()).build();
    }

    /** Messages in {@code queue}, visible or in flight. */
    long pending(String queue) {
        String url = sqs.getQueueUrl(r -> r.queueName(queue)).queueUrl();
        Map<QueueAttributeName, String> a = sqs.getQueueAttributes(r -> r.queueUrl(url).attributeNames(
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE)).attributes();
        return Long.parseLong(a.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES))
                + Long.parseLong(a.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE));
    }

    @Override
    public void close() {
        sqs.close();
    }
}
