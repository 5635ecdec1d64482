package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Hibernate only when asked (issue 32 item 4): the starter's integration tests run in this module's default Failsafe
 * execution on a class path without Hibernate, JPA, spring-orm or Spring Data JPA ({@code pom.xml}'s
 * {@code classpathDependencyExcludes}), as a service that uses only JDBC has it; {@code JpaSampleServiceIT} runs apart
 * with them. This test pins both halves: that the class path really lacks them, and that adapters-postgres keeps
 * Hibernate optional, so that a service depending on it and the starter does not get Hibernate transitively.
 */
class JdbcOnlyIT {

    @Test
    void thisClassPathHasNeitherHibernateNorJpa() {
        for (String name : new String[] {"org.hibernate.Session", "jakarta.persistence.EntityManager",
                "org.springframework.orm.jpa.JpaTransactionManager",
                "org.springframework.data.jpa.repository.JpaRepository"}) {
            assertThatThrownBy(() -> Class.forName(name)).as(name).isInstanceOf(ClassNotFoundException.class);
        }
        assertThat(IdempotentInbox.class).as("the starter's JDBC side is here").isNotNull();
    }

    /**
     * The root README's plain-Java path without Spring and without Hibernate: idemkit's tables applied, a message
     * credited once in the caller's own JDBC transaction for two deliveries, and retention run over the tables.
     */
    @Test
    void thePlainJavaJoinedStoresRunWithoutHibernate() throws Exception {
        dev.idemkit.adapters.postgres.PostgresSettings pg = dev.idemkit.adapters.postgres.PostgresSettings
                .fromEnvironment();
        String schema = dev.idemkit.testsupport.TestPostgres.uniqueSchema("idemkit_jdbc_only");
        org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
        ds.setURL(pg.url() + (pg.url().contains("?") ? "&" : "?") + "currentSchema=" + schema);
        ds.setUser(pg.user());
        ds.setPassword(pg.password());
        try {
            dev.idemkit.adapters.postgres.PostgresMigrations.apply(ds, schema);
            int[] credits = new int[1];
            for (int delivery = 0; delivery < 2; delivery++) {
                try (java.sql.Connection c = ds.getConnection()) {
                    c.setAutoCommit(false);
                    new dev.idemkit.adapters.postgres.JoinedInboxStore(dev.idemkit.adapters.postgres.CallerTransaction
                            .jdbc(c)).runOnce(dev.idemkit.domain.inbox.InboxKey.of("jdbc-only", "m-1"),
                                    dev.idemkit.domain.Fingerprint.of("credit 1"), work -> {
                                        credits[0]++;
                                        return null;
                                    });
                    c.commit();
                }
            }
            assertThat(credits[0]).as("the effect ran once for two deliveries").isOne();
            dev.idemkit.adapters.postgres.PostgresRetention.Report report =
                    new dev.idemkit.adapters.postgres.PostgresRetention(ds).purge(
                            dev.idemkit.adapters.postgres.PostgresRetention.Policy.defaults(), () -> true);
            assertThat(report.caughtUp()).isTrue();
            assertThat(report.processedMessages()).as("a key inside the window stays").isZero();
        } finally {
            dev.idemkit.testsupport.TestPostgres.dropSchema(schema);
        }
    }

    @Test
    void adaptersPostgresDeclaresHibernateAndJpaOptional() throws Exception {
        String pom = Files.readString(Path.of("../adapters-postgres/pom.xml"));
        for (String artifact : new String[] {"hibernate-core", "jakarta.persistence-api"}) {
            Matcher m = Pattern.compile("<artifactId>" + Pattern.quote(artifact) + "</artifactId>\\s*(<[^/][^>]*>[^<]*"
                    + "</[^>]+>\\s*)*</dependency>").matcher(pom);
            assertThat(m.find()).as("%s declared in adapters-postgres", artifact).isTrue();
            assertThat(m.group()).as("%s is optional", artifact).contains("<optional>true</optional>");
        }
    }
}
