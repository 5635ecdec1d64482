package dev.idemkit.adapters.sqs;

import java.time.Duration;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.SqsClientBuilder;

/** Builds the sync SQS client from {@link SqsSettings}, on the JDK's HTTP client. */
final class SqsClients {
    private SqsClients() {}

    static SqsClient create(SqsSettings settings) {
        // the socket must outlive a long poll
        Duration socket = Duration.ofSeconds(settings.waitTimeSeconds() + 15L);
        SqsClientBuilder builder = SqsClient.builder()
                .region(Region.of(settings.region()))
                .httpClientBuilder(UrlConnectionHttpClient.builder()
                        .connectionTimeout(Duration.ofSeconds(5))
                        .socketTimeout(socket));
        settings.endpoint().ifPresent(builder::endpointOverride);
        if (settings.staticCredentials().isPresent()) {
            SqsSettings.StaticCredentials c = settings.staticCredentials().get();
            builder.credentialsProvider(StaticCredentialsProvider.create(
                    AwsBasicCredentials.create(c.accessKeyId(), c.secretAccessKey())));
        } else {
            builder.credentialsProvider(DefaultCredentialsProvider.builder().build());
        }
        return builder.build();
    }
}
