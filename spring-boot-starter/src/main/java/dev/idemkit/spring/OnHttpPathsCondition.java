package dev.idemkit.spring;

import java.util.List;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches when {@code idemkit.http.paths} names at least one path (as a comma list or a YAML list). */
final class OnHttpPathsCondition extends SpringBootCondition {
    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        List<String> paths = Binder.get(context.getEnvironment())
                .bind("idemkit.http.paths", Bindable.listOf(String.class)).orElse(List.of());
        return paths.isEmpty() ? ConditionOutcome.noMatch("idemkit.http.paths is empty")
                : ConditionOutcome.match("idemkit.http.paths " + paths);
    }
}
