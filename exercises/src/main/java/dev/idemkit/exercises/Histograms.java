package dev.idemkit.exercises;

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
     * A text histogram: each row sums the buckets of {@code rowMillis} and draws a bar scaled to
     * {@code scaleMax}, so that two series drawn with the same arguments compare at a glance.
     */
    static List<String> text(String label, long[] perBucket, double bucketMillis, double rowMillis, int rows, int width,
            long scaleMax) {
        long[] summed = rows(perBucket, bucketMillis, rowMillis, rows);
        List<String> out = new ArrayList<>();
        out.add(label + " (retries per " + (long) rowMillis + " ms)");
        for (int r = 0; r < rows; r++) {
            int bar = (int) Math.round((double) summed[r] * width / Math.max(1, scaleMax));
            out.add(String.format("%6.1fs | %-" + width + "s %d", r * rowMillis / 1000.0, "#".repeat(bar), summed[r]));
        }
        return out;
    }

    /** The buckets summed into {@code rows} rows of {@code rowMillis}. */
    static long[] rows(long[] perBucket, double bucketMillis, double rowMillis, int rows) {
        int per = (int) Math.max(1, Math.round(rowMillis / bucketMillis));
        long[] summed = new long[rows];
        for (int i = 0; i < perBucket.length && i / per < rows; i++) {
            summed[i / per] += perBucket[i];
        }
        return summed;
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
