package dev.idemkit.app.architecture;

import static com.tngtech.archunit.library.GeneralCodingRules.ACCESS_STANDARD_STREAMS;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import dev.idemkit.archfixtures.adapters.postgres.KnowsTheApp;
import dev.idemkit.archfixtures.adapters.postgres.ReachesIntoRabbit;
import dev.idemkit.archfixtures.adapters.postgres.UsesRabbitClient;
import dev.idemkit.archfixtures.adapters.rabbit.RabbitThing;
import dev.idemkit.archfixtures.app.AppThing;
import dev.idemkit.archfixtures.app.Faults;
import dev.idemkit.archfixtures.app.TakesFaults;
import dev.idemkit.archfixtures.app.UsesABenchmark;
import dev.idemkit.archfixtures.app.http.ApiNamesAnAdapter;
import dev.idemkit.archfixtures.benchmarks.BenchThing;
import dev.idemkit.archfixtures.exercises.UsesAnAdapter;
import dev.idemkit.archfixtures.exercises.UsesTheApp;
import dev.idemkit.archfixtures.ok.exercises.Check;
import dev.idemkit.archfixtures.cycle.a.A;
import dev.idemkit.archfixtures.cycle.b.B;
import dev.idemkit.archfixtures.domain.DrawsRandomNumbers;
import dev.idemkit.archfixtures.domain.LogsWithSlf4j;
import dev.idemkit.archfixtures.domain.PrintsToStdout;
import dev.idemkit.archfixtures.domain.ReadsTheClock;
import dev.idemkit.archfixtures.ok.adapters.postgres.PostgresStore;
import dev.idemkit.archfixtures.ok.domain.PureDecision;
import dev.idemkit.archfixtures.ok.ports.Store;
import dev.idemkit.archfixtures.ports.NamesAnAdapter;
import dev.idemkit.archfixtures.ports.UsesRedisson;
import java.util.Arrays;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Every architecture rule, built for the fixture root, fails on a class that breaks it and passes on
 * conforming classes: the rules are known to bite, and known not to bite everything.
 */
class RulesBiteTest {
    private static final String FIXTURES = "dev.idemkit.archfixtures";
    private static final JavaClasses CONFORMING =
            new ClassFileImporter().importClasses(PureDecision.class, Store.class, PostgresStore.class, Check.class,
                    dev.idemkit.archfixtures.ok.app.http.Api.class,
                    dev.idemkit.archfixtures.ok.app.config.ConfigChecksALimit.class,
                    dev.idemkit.archfixtures.ok.adapters.rabbit.RabbitThingSettings.class);

    private static JavaClasses only(Class<?>... classes) {
        return new ClassFileImporter().importClasses(classes);
    }

    /**
     * The rule built for the fixture root fails on the violators; the same rule built for the
     * conforming root ({@code archfixtures.ok}) passes on conforming classes.
     */
    private static void bites(Function<String, ArchRule> rule, Class<?>... violators) {
        ArchRule forViolators = rule.apply(FIXTURES);
        assertThatThrownBy(() -> forViolators.check(only(violators)))
                .as("rule should fail on %s: %s", Arrays.toString(violators), forViolators.getDescription())
                .isInstanceOf(AssertionError.class);
        ArchRule forConforming = rule.apply(FIXTURES + ".ok");
        assertThatCode(() -> forConforming.check(CONFORMING)).as("rule should pass on conforming classes")
                .doesNotThrowAnyException();
    }

    @Test
    void apiRuleFailsOnAModuleNamingAnotherModulesUnlistedType() {
        // RabbitThing is not in the fixture adapter's API; the conforming configuration names only the listed
        // RabbitThingSettings
        bites(root -> IdemkitRules.otherModulesUseOnlyTheApi(root,
                java.util.Map.of(root + ".adapters.rabbit", java.util.Set.of("RabbitThingSettings"))),
                ReachesIntoRabbit.class, RabbitThing.class);
    }

    @Test
    void domainRuleFailsOnALoggingFramework() {
        bites(IdemkitRules::domainUsesJdkOnly, LogsWithSlf4j.class);
    }

    @Test
    void domainPurityRuleFailsOnReadingTheClock() {
        bites(IdemkitRules::domainDoesNoIoNorClockNorRandomness, ReadsTheClock.class);
    }

    @Test
    void domainPurityRuleFailsOnMathRandom() {
        bites(IdemkitRules::domainDoesNoIoNorClockNorRandomness, DrawsRandomNumbers.class);
    }

    @Test
    void portsRuleFailsOnATechnologyInAPort() {
        bites(IdemkitRules::portsUseDomainAndJdkOnly, UsesRedisson.class);
    }

    @Test
    void layerRuleFailsOnAPortNamingAnAdapter() {
        bites(IdemkitRules::layers, NamesAnAdapter.class, RabbitThing.class);
    }

    @Test
    void layerRuleFailsOnAnAdapterNamingTheApp() {
        bites(IdemkitRules::layers, KnowsTheApp.class, AppThing.class);
    }

    @Test
    void adapterIndependenceRuleFailsOnOneAdapterUsingAnother() {
        bites(IdemkitRules::adaptersAreIndependent, ReachesIntoRabbit.class, RabbitThing.class);
    }

    @Test
    void adapterToAppRuleFailsOnAnAdapterNamingTheApp() {
        bites(IdemkitRules::adaptersDoNotKnowTheApp, KnowsTheApp.class, AppThing.class);
    }

    @Test
    void exercisesRuleFailsOnAnExerciseNamingAnAdapter() {
        bites(IdemkitRules::exercisesNameNoAdapterNorTheApp, UsesAnAdapter.class, RabbitThing.class);
    }

    @Test
    void exercisesRuleFailsOnAnExerciseNamingTheApp() {
        bites(IdemkitRules::exercisesNameNoAdapterNorTheApp, UsesTheApp.class, AppThing.class);
    }

    @Test
    void layerRuleFailsOnAnExerciseNamingTheApp() {
        bites(IdemkitRules::layers, UsesTheApp.class, AppThing.class);
    }

    @Test
    void exampleServiceRuleFailsOnTheApiNamingAnAdapter() {
        bites(IdemkitRules::exampleServiceNamesNoAdapter, ApiNamesAnAdapter.class, RabbitThing.class);
    }

    @Test
    void configRuleFailsOnTheConfigurationBuildingAnAdapter() {
        bites(IdemkitRules::configNamesOnlyAdapterSettings,
                dev.idemkit.archfixtures.app.config.ConfigBuildsAnAdapter.class, RabbitThing.class);
    }

    @Test
    void benchmarksRuleFailsOnTheAppUsingABenchmark() {
        bites(IdemkitRules::nothingDependsOnBenchmarks, UsesABenchmark.class, BenchThing.class);
    }

    @Test
    void layerRuleFailsOnTheAppUsingABenchmark() {
        bites(IdemkitRules::layers, UsesABenchmark.class, BenchThing.class);
    }

    @Test
    void faultInjectorRuleFailsOnAConstructorTakingFaults() {
        bites(IdemkitRules::noProductionTypeTakesAFaultInjector, TakesFaults.class, Faults.class);
    }

    @Test
    void cycleRuleFailsOnAPackageCycle() {
        bites(IdemkitRules::noPackageCycles, A.class, B.class);
    }

    @Test
    void adapterNamingRuleFailsOnAPortNamingAnAdapterClass() {
        bites(IdemkitRules::adapterClassesNamedOnlyInTheirModuleAndApp, NamesAnAdapter.class,
                RabbitThing.class);
    }

    @Test
    void technologyConfinementFailsOnAmqpOutsideTheRabbitAdapter() {
        bites(root -> IdemkitRules.technologyConfined(root, "rabbit", "com.rabbitmq.."), UsesRabbitClient.class);
    }

    @Test
    void technologyConfinementFailsOnRedissonOutsideTheRedisAdapter() {
        bites(root -> IdemkitRules.technologyConfined(root, "redis", "org.redisson.."), UsesRedisson.class);
    }

    @Test
    void printingRuleFailsOnSystemOut() {
        bites(root -> noClasses().that().resideInAnyPackage(root + ".domain..").should(ACCESS_STANDARD_STREAMS),
                PrintsToStdout.class);
    }
}
