package dev.idemkit.app.exercises;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** Renders exercise 4's retry arrivals as a text histogram and as a PNG chart. */
final class Histograms {
    private Histograms() {}

    /**
     * A text histogram over {@code rows} coarse rows: each row sums consecutive buckets and draws a
     * bar scaled to the largest row.
     */
    static List<String> text(String label, long[] perBucket, double bucketMillis, int rows, int width) {
        int last = lastNonEmpty(perBucket);
        int per = Math.max(1, (last + rows) / rows);
        long[] summed = new long[(last / per) + 1];
        for (int i = 0; i <= last; i++) {
            summed[i / per] += perBucket[i];
        }
        long max = 1;
        for (long v : summed) {
            max = Math.max(max, v);
        }
        List<String> out = new ArrayList<>();
        out.add(label + " (each row " + (long) (per * bucketMillis) + " ms of retries)");
        for (int r = 0; r < summed.length; r++) {
            int bar = (int) Math.round((double) summed[r] * width / max);
            out.add(String.format("%8.2fs | %-" + width + "s %d", r * per * bucketMillis / 1000.0, "#".repeat(bar),
                    summed[r]));
        }
        return out;
    }

    static void png(Path file, long[] withJitter, long[] withoutJitter, double bucketMillis) throws IOException {
        XYChart chart = new XYChartBuilder().width(1000).height(500)
                .title("100 clients failing together: retries per " + (long) bucketMillis + " ms")
                .xAxisTitle("seconds since the failure").yAxisTitle("requests per bucket").build();
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNE);
        addSeries(chart, "no jitter", withoutJitter, bucketMillis);
        addSeries(chart, "full jitter", withJitter, bucketMillis);
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    private static void addSeries(XYChart chart, String name, long[] perBucket, double bucketMillis) {
        int last = lastNonEmpty(perBucket);
        double[] x = new double[last + 1];
        double[] y = new double[last + 1];
        for (int i = 0; i <= last; i++) {
            x[i] = i * bucketMillis / 1000.0;
            y[i] = perBucket[i];
        }
        chart.addSeries(name, x, y).setMarker(SeriesMarkers.NONE);
    }

    private static int lastNonEmpty(long[] perBucket) {
        int last = 0;
        for (int i = 0; i < perBucket.length; i++) {
            if (perBucket[i] > 0) {
                last = i;
            }
        }
        return last;
    }
}
