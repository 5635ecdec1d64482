package dev.idemkit.exercises;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/** One exercise's criteria: each line says what was measured, what was expected, and PASS or FAIL. */
public final class Report {
    /** One criterion. */
    public record Criterion(String text, boolean passed) {
        @Override
        public String toString() {
            return text + " " + (passed ? "PASS" : "FAIL");
        }
    }

    private final String title;
    private final List<Criterion> criteria = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    public Report(String title) {
        this.title = title;
    }

    public Report check(String text, boolean passed) {
        criteria.add(new Criterion(text, passed));
        return this;
    }

    public Report note(String text) {
        notes.add(text);
        return this;
    }

    public boolean passed() {
        return !criteria.isEmpty() && criteria.stream().allMatch(Criterion::passed);
    }

    public List<Criterion> criteria() {
        return List.copyOf(criteria);
    }

    public String title() {
        return title;
    }

    public void print(PrintWriter out) {
        out.println("== " + title);
        notes.forEach(n -> out.println("   " + n));
        criteria.forEach(c -> out.println("   " + c));
        out.println("   => " + (passed() ? "PASS" : "FAIL"));
    }
}
