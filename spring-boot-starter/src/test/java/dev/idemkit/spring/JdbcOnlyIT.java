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
