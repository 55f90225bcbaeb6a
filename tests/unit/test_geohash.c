/* test_geohash.c - unit tests of the geohash arithmetic behind the GEO
 * commands (src/core/geohash.c): stored scores and decoded positions of
 * known points (values measured on Redis), the upper-limit quirk, the
 * base32 string, haversine distances, neighbour wrap-around and the search
 * cover. The commands themselves are tested in tests/integration. */
#include "core/geohash.h"
#include "test.h"

#include <math.h>
#include <stdio.h>

static void fmt_ld(char *buf, size_t n, double d) { snprintf(buf, n, "%.17Lf", (long double)d); }

static void test_scores(void) {
    double s;
    CHECK(geo_score_of(13.361389, 38.115556, &s));
    CHECK_EQ_LL((long long)s, 3479099956230698LL);
    CHECK(geo_score_of(15.087269, 37.502669, &s));
    CHECK_EQ_LL((long long)s, 3479447370796909LL);
    CHECK(geo_score_of(-180, -85.05112878, &s));
    CHECK_EQ_LL((long long)s, 0);
    CHECK(geo_score_of(0, 0, &s));
    CHECK_EQ_LL((long long)s, 3377699720527872LL);
    /* The upper limits give an offset of exactly 2^26, which spills into
     * bit 52 (latitude) and 53 (longitude), as in Redis. */
    CHECK(geo_score_of(180, 85.05112878, &s));
    CHECK_EQ_LL((long long)s, 13510798882111488LL);
    CHECK(!geo_score_of(180.0000001, 0, &s));
    CHECK(!geo_score_of(0, 85.06, &s));
    CHECK(!geo_score_of(NAN, 0, &s));
}

static void test_decode(void) {
    double xy[2];
    char buf[64];
    CHECK(geo_score_decode(3479099956230698.0, xy));
    fmt_ld(buf, sizeof(buf), xy[0]);
    CHECK_MEM(buf, strlen(buf), "13.36138933897018433");
    fmt_ld(buf, sizeof(buf), xy[1]);
    CHECK_MEM(buf, strlen(buf), "38.11555639549629859");
    /* Clamped to the limits. */
    CHECK(geo_score_decode(13510798882111488.0, xy));
    CHECK(xy[0] == 180 && xy[1] == GEO_LAT_MAX);
    /* Scores of plain sorted sets never make an undefined conversion. */
    CHECK(geo_score_decode(-5, xy));
    CHECK(geo_score_decode(1e300, xy));
    CHECK(geo_score_decode(INFINITY, xy));
}

static void test_hashstr(void) {
    char h[12];
    CHECK(geo_score_hashstr(3479099956230698.0, h));
    CHECK_MEM(h, strlen(h), "sqc8b49rny0");
    CHECK(geo_score_hashstr(3479447370796909.0, h));
    CHECK_MEM(h, strlen(h), "sqdtr74hyu0");
    CHECK(geo_score_hashstr(3377699720527872.0, h));
    CHECK_MEM(h, strlen(h), "s0000000000");
}

static void test_distance(void) {
    double a[2], b[2], buf_d;
    char buf[64];
    geo_score_decode(3479099956230698.0, a);
    geo_score_decode(3479447370796909.0, b);
    buf_d = geo_distance(a[0], a[1], b[0], b[1]);
    snprintf(buf, sizeof(buf), "%.4f", buf_d);
    CHECK_MEM(buf, strlen(buf), "166274.1516");
    snprintf(buf, sizeof(buf), "%.4f", geo_distance(a[0], a[1], a[0], a[1]));
    CHECK_MEM(buf, strlen(buf), "0.0000");
    /* Same meridian: the latitude shortcut. */
    CHECK(fabs(geo_distance(10, 0, 10, 1) - GEO_EARTH_RADIUS_M * M_PI / 180) < 1e-6);
}

static void test_cover(void) {
    struct geo_cell cells[9];
    struct geo_shape s = {0};
    s.type = GEO_SHAPE_RADIUS;
    s.xy[0] = 15;
    s.xy[1] = 37;
    s.conversion = 1;
    s.radius = 0;
    geo_cover(&s, cells);
    CHECK_EQ_LL(cells[0].step, 26);
    double min, max;
    geo_cell_scores(cells[0], &min, &max);
    CHECK(max - min == 1);
    /* A radius larger than the world searches whole top-level cells. */
    s.radius = 3e7;
    geo_cover(&s, cells);
    CHECK_EQ_LL(cells[0].step, 1);
    geo_cell_scores(cells[0], &min, &max);
    CHECK(max - min == (double)(1ULL << 50));
    /* Every cell of the cover has the centre's step or is unused. */
    s.radius = 50000;
    geo_cover(&s, cells);
    for (int i = 1; i < 9; i++) CHECK(cells[i].step == 0 || cells[i].step == cells[0].step);
    CHECK(s.bounds[0] < 15 && s.bounds[2] > 15 && s.bounds[1] < 37 && s.bounds[3] > 37);
}

static void test_in_shape(void) {
    struct geo_shape s = {0};
    double d;
    s.type = GEO_SHAPE_BOX;
    s.xy[0] = 0;
    s.xy[1] = 0;
    s.conversion = 1000;
    s.width = 200;
    s.height = 100;
    CHECK(geo_in_shape(&s, 0.8, 0.4, &d));
    CHECK(!geo_in_shape(&s, 0.8, 0.5, &d));
    CHECK(!geo_in_shape(&s, 0.95, 0.1, &d));
    s.type = GEO_SHAPE_RADIUS;
    s.radius = 100;
    CHECK(geo_in_shape(&s, 0.6, 0.5, &d));
    CHECK(d > 80000 && d < 95000);
    CHECK(!geo_in_shape(&s, 0.8, 0.5, &d));
}

int main(void) {
    TEST_RUN(test_scores);
    TEST_RUN(test_decode);
    TEST_RUN(test_hashstr);
    TEST_RUN(test_distance);
    TEST_RUN(test_cover);
    TEST_RUN(test_in_shape);
    return TEST_REPORT();
}
