package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.adapters.postgres.PostgresSettings;
import java.sql.Connection;
import dev.idemkit.testsupport.TestPostgres;
import java.sql.Statement;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** What the starter refuses at start-up, before a message is taken: each with a message that says what to change. */
class StarterStartupChecksIT {
    private static final PostgresSettings PG = PostgresSettings.fromEnvironment();

    @Test
    void idemkitsTablesOutsideTheSearchPathStopTheStartWithAClearError() throws Exception {
        String schema = TestPostgres.uniqueSchema("idemkit_elsewhere");
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(PG.url()); // search path: "$user", public; the tables go to another schema
        ds.setUser(PG.user());
        ds.setPassword(PG.password());
        try {
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdemkitAutoConfiguration.class,
                    IdemkitPostgresAutoConfiguration.class))
                    .withBean(DataSource.class, () -> ds).withPropertyValues("idemkit.postgres.schema=" + schema)
                    .run(context -> {
                        assertThat(context).hasFailed();
                        assertThat(context.getStartupFailure()).rootCause()
                                .hasMessageContaining("idemkit's tables belong in schema " + schema)
                                .hasMessageContaining("currentSchema=" + schema);
                    });
            // refused before anything was created: no schema, no tables left behind
            try (java.sql.Connection c = ds.getConnection(); java.sql.PreparedStatement ps = c.prepareStatement(
                    "SELECT count(*) FROM pg_namespace WHERE nspname = ?")) {
                ps.setString(1, schema);
                try (java.sql.ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertThat(rs.getLong(1)).as("schema %s left behind by the refused start", schema).isZero();
                }
            }
        } finally {
            TestPostgres.dropSchema(schema);
        }
    }

    /**
     * A table of the same name in a schema later on the search path (another library's processed_messages, or
     * idemkit's old home) does not stop the start: once created first on the path, idemkit's tables are the ones
     * found. A check that read the path before migrating refused this start (a helper's review).
     */
    @Test
    void anInboxTableOfTheSameNameLaterOnTheSearchPathDoesNotStopTheStart() throws Exception {
        String schema = TestPostgres.uniqueSchema("idemkit_first");
        String other = TestPostgres.uniqueSchema("idemkit_later");
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(PG.url() + (PG.url().contains("?") ? "&" : "?") + "currentSchema=" + schema + "," + other);
        ds.setUser(PG.user());
        ds.setPassword(PG.password());
        try (java.sql.Connection c = ds.getConnection(); java.sql.Statement st = c.createStatement()) {
            st.execute("CREATE SCHEMA " + other);
            st.execute("CREATE TABLE " + other + ".processed_messages (id text)");
        }
        try {
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdemkitAutoConfiguration.class,
                    IdemkitPostgresAutoConfiguration.class))
                    .withBean(DataSource.class, () -> ds).withPropertyValues("idemkit.postgres.schema=" + schema)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        assertThat(context.getBean(IdemkitAutoConfiguration.IdemkitSchema.class).name())
                                .isEqualTo(schema);
                    });
        } finally {
            TestPostgres.dropSchema(schema);
            TestPostgres.dropSchema(other);
        }
    }

    /**
     * A role without the right to create schemas starts on a schema and tables a DBA made: the check before the
     * migrations creates only what is missing (CREATE SCHEMA IF NOT EXISTS asks for that right even when the schema
     * is there).
     */
    @Test
    void aRoleThatMayNotCreateSchemasStartsOnTheSchemaItWasGiven() throws Exception {
        String schema = TestPostgres.uniqueSchema("idemkit_given");
        String role = schema + "_role";
        PGSimpleDataSource admin = new PGSimpleDataSource();
        admin.setURL(PG.url());
        admin.setUser(PG.user());
        admin.setPassword(PG.password());
        try (java.sql.Connection c = admin.getConnection(); java.sql.Statement st = c.createStatement()) {
            st.execute("CREATE ROLE " + role + " LOGIN");
            st.execute("CREATE SCHEMA " + schema + " AUTHORIZATION " + role);
        }
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(PG.url() + (PG.url().contains("?") ? "&" : "?") + "currentSchema=" + schema);
        ds.setUser(role);
        try {
            try (java.sql.Connection c = ds.getConnection(); java.sql.PreparedStatement ps = c.prepareStatement(
                    "SELECT has_database_privilege(current_database(), 'CREATE')");
                    java.sql.ResultSet rs = ps.executeQuery()) {
                rs.next();
                // where PUBLIC may create schemas in this database, the case cannot be set up here
                org.junit.jupiter.api.Assumptions.assumeFalse(rs.getBoolean(1), "a new role may create schemas here");
            }
            dev.idemkit.adapters.postgres.PostgresMigrations.apply(ds, schema); // the DBA's part, as the role
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdemkitAutoConfiguration.class,
                    IdemkitPostgresAutoConfiguration.class))
                    .withBean(DataSource.class, () -> ds).withPropertyValues("idemkit.postgres.schema=" + schema)
                    .run(context -> assertThat(context).hasNotFailed());
        } finally {
            TestPostgres.dropSchema(schema);
            try (java.sql.Connection c = admin.getConnection(); java.sql.Statement st = c.createStatement()) {
                st.execute("DROP ROLE IF EXISTS " + role);
            }
        }
    }

    private static IdempotentListenersCheck check(SimpleMessageListenerContainer container, Set<String> queues) {
        RabbitListenerEndpointRegistry registry = new RabbitListenerEndpointRegistry() {
            @Override
            public java.util.Collection<MessageListenerContainer> getListenerContainers() {
                return List.of(container);
            }
        };
        return new IdempotentListenersCheck(registry, q -> queues.isEmpty() || queues.contains(q), q -> { });
    }

    @Test
    void aManualAckTransactedOrUnkeyableListenerIsRefusedAndAnAutoOneStarts() {
        CachingConnectionFactory cf = new CachingConnectionFactory("127.0.0.1"); // never connects: nothing starts
        try {
            SimpleMessageListenerContainer manual = new SimpleMessageListenerContainer(cf);
            manual.setQueueNames("credits");
            manual.setAcknowledgeMode(AcknowledgeMode.MANUAL);
            assertThatThrownBy(() -> check(manual, Set.of()).start()).hasMessageContaining("acknowledges MANUAL");

            SimpleMessageListenerContainer transacted = new SimpleMessageListenerContainer(cf);
            transacted.setQueueNames("credits");
            transacted.setChannelTransacted(true);
            assertThatThrownBy(() -> check(transacted, Set.of()).start()).hasMessageContaining("transacted channel");

            SimpleMessageListenerContainer spaced = new SimpleMessageListenerContainer(cf);
            spaced.setQueueNames("credits with spaces");
            assertThatThrownBy(() -> check(spaced, Set.of()).start())
                    .hasMessageContaining("makes no valid inbox consumer");

            SimpleMessageListenerContainer auto = new SimpleMessageListenerContainer(cf);
            auto.setQueueNames("credits");
            IdempotentListenersCheck ok = check(auto, Set.of());
            ok.start();
            assertThat(ok.isRunning()).isTrue();
            // a listener of a queue idemkit was not asked to guard is not checked
            check(manual, Set.of("orders")).start();
        } finally {
            cf.destroy();
        }
    }

    @Test
    void idempotentListenersWithoutTheRabbitAdapterStopTheStartSayingWhatToAdd() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(IdemkitAutoConfiguration.class,
                        IdemkitRabbitAutoConfiguration.class))
                .withClassLoader(new org.springframework.boot.test.context.FilteredClassLoader(
                        "dev.idemkit.adapters.rabbit"))
                .withPropertyValues("idemkit.rabbit.idempotent-listeners=true")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .hasMessageContaining("needs dev.idemkit:idemkit-adapters-rabbit");
                });
    }

    @Test
    void springsListenerRetryIsRecognisedByItsTypeAndRefused() {
        org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory listenerFactory =
                new org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory();
        listenerFactory.setAdviceChain(org.springframework.amqp.rabbit.config.RetryInterceptorBuilder.stateless()
                .build());
        var processor = IdemkitRabbitAutoConfiguration.Listeners.idemkitListenerFactoryAdvice(
                new org.springframework.beans.factory.support.StaticListableBeanFactory()
                        .getBeanProvider(IdempotentListenerAdvice.class),
                new org.springframework.beans.factory.support.StaticListableBeanFactory()
                        .getBeanProvider(IdemkitProperties.class));
        assertThatThrownBy(() -> processor.postProcessAfterInitialization(listenerFactory,
                "rabbitListenerContainerFactory")).hasMessageContaining("turn Spring's listener retry off");
    }

    @Test
    void aTransactionAdviceAroundTheListenersIsRefused() {
        org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory listenerFactory =
                new org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory();
        listenerFactory.setAdviceChain(new org.springframework.transaction.interceptor.TransactionInterceptor());
        var processor = IdemkitRabbitAutoConfiguration.Listeners.idemkitListenerFactoryAdvice(
                new org.springframework.beans.factory.support.StaticListableBeanFactory()
                        .getBeanProvider(IdempotentListenerAdvice.class),
                new org.springframework.beans.factory.support.StaticListableBeanFactory()
                        .getBeanProvider(IdemkitProperties.class));
        assertThatThrownBy(() -> processor.postProcessAfterInitialization(listenerFactory,
                "rabbitListenerContainerFactory")).hasMessageContaining("transaction of its own");
    }

    @Test
    void aListenerQueueTheServiceDeclaresAutoDeleteOrExclusiveIsRefused() {
        CachingConnectionFactory cf = new CachingConnectionFactory("127.0.0.1"); // never connects: nothing starts
        try {
            SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(cf);
            container.setQueueNames("credits");
            RabbitListenerEndpointRegistry registry = new RabbitListenerEndpointRegistry() {
                @Override
                public java.util.Collection<MessageListenerContainer> getListenerContainers() {
                    return List.of(container);
                }
            };
            java.util.List<String> declared = new java.util.ArrayList<>();
            IdempotentListenersCheck autoDelete = new IdempotentListenersCheck(registry, q -> true, declared::add,
                    name -> new org.springframework.amqp.core.Queue(name, true, false, true));
            assertThatThrownBy(autoDelete::start).hasMessageContaining("auto-delete");
            assertThat(declared).as("nothing declared for a refused service").isEmpty();
            IdempotentListenersCheck durable = new IdempotentListenersCheck(registry, q -> true, declared::add,
                    name -> new org.springframework.amqp.core.Queue(name));
            durable.start();
            assertThat(declared).containsExactly("credits");
        } finally {
            cf.destroy();
        }
    }
}
