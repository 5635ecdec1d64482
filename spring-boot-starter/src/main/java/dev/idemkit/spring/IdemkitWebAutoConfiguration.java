package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.JoinedIdempotencyClaims;
import dev.idemkit.adapters.postgres.JoinedInboxStore;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.ports.service.IdempotentRequestService;
import dev.idemkit.spring.IdemkitAutoConfiguration.IdemkitSchema;
import jakarta.servlet.Filter;
import java.util.Locale;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The Idempotency-Key protocol in front of the Spring MVC paths of {@code idemkit.http.paths}: the claim, the
 * handler and the stored response in the handler's transaction.
 */
@AutoConfiguration(after = IdemkitPostgresAutoConfiguration.class)
@ConditionalOnProperty(prefix = "idemkit", name = "enabled", matchIfMissing = true)
@ConditionalOnClass({JoinedInboxStore.class, OncePerRequestFilter.class, Filter.class})
@ConditionalOnBean(DataSource.class)
@Conditional(OnHttpPathsCondition.class)
@EnableConfigurationProperties(IdemkitProperties.class)
public class IdemkitWebAutoConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(IdemkitWebAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean(name = "idemkitIdempotencyKeyFilter")
    Filter idemkitIdempotencyKeyFilter(DataSource dataSource, IdemkitSchema schema,
            PlatformTransactionManager transactionManager, IdemkitProperties properties) {
        IdemkitProperties.Http http = properties.getHttp();
        KeyPolicy policy = new KeyPolicy(http.getTtl(), http.getWaitBound(),
                http.isKeyRequired() ? KeyPolicy.Requirement.REQUIRED : KeyPolicy.Requirement.OPTIONAL);
        SpringCallerTransaction caller = new SpringCallerTransaction(dataSource);
        var claims = new SpringIdempotencyClaims(new JoinedIdempotencyClaims(caller),
                new TransactionTemplate(transactionManager));
        LOG.info("idemkit Idempotency-Key protocol on {} {} (schema {}, client from the principal{})",
                http.getMethods(), http.getPaths(), schema.name(),
                http.getClientHeader() == null ? "" : " or " + http.getClientHeader());
        return new IdempotencyKeyFilter(new IdempotentRequestService<>(claims, policy), http.getPaths(),
                http.getMethods().stream().map(m -> m.toUpperCase(Locale.ROOT)).collect(Collectors.toSet()),
                http.getClientHeader(), caller::doomed,
                IdemkitProperties.bytes("idemkit.http.max-body-size", http.getMaxBodySize()));
    }
}
