/* geohash.c - geohash encoding, cell neighbours, search covers and
 * distances for the GEO commands (see geohash.h). The arithmetic follows
 * Redis's exactly (same ranges, same truncation of the fixed-point offsets,
 * same step estimate and cell pruning, same haversine with the latitude
 * shortcut) because the stored scores, the cells searched and the order of
 * unsorted results are all visible to clients. */
#include "geohash.h"

#include <math.h>
#include <stddef.h>

static const struct geo_range geo_lon_range = {GEO_LON_MIN, GEO_LON_MAX};
static const struct geo_range geo_lat_range = {GEO_LAT_MIN, GEO_LAT_MAX};

static inline double deg2rad(double d) { return d * (M_PI / 180.0); }
static inline double rad2deg(double r) { return r / (M_PI / 180.0); }

/* Spread the 32 bits of v to the even positions of a 64-bit word. */
static uint64_t spread32(uint32_t v) {
    uint64_t x = v;
    x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x << 2)) & 0x3333333333333333ULL;
    x = (x | (x << 1)) & 0x5555555555555555ULL;
    return x;
}

/* Gather the even-position bits of x into a 32-bit value. */
static uint32_t gather32(uint64_t x) {
    x &= 0x5555555555555555ULL;
    x = (x | (x >> 1)) & 0x3333333333333333ULL;
    x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
    return (uint32_t)x;
}

static inline uint64_t interleave(uint32_t lat, uint32_t lon) { return spread32(lat) | (spread32(lon) << 1); }

int geo_encode(const struct geo_range *lon_r, const struct geo_range *lat_r, double lon, double lat, int step,
               struct geo_cell *out) {
    if (step <= 0 || step > 32) return 0;
    if (lon_r->max == lon_r->min || lat_r->max == lat_r->min) return 0;
    if (!(lon >= GEO_LON_MIN && lon <= GEO_LON_MAX && lat >= GEO_LAT_MIN && lat <= GEO_LAT_MAX)) return 0;
    if (lat < lat_r->min || lat > lat_r->max || lon < lon_r->min || lon > lon_r->max) return 0;
    double lat_off = (lat - lat_r->min) / (lat_r->max - lat_r->min);
    double lon_off = (lon - lon_r->min) / (lon_r->max - lon_r->min);
    /* Truncating to integers (not rounding) is what fixes the stored
     * scores; an offset of exactly 1.0 (the upper limit) yields 2^step,
     * which the 32-bit truncation keeps, as Redis's does. */
    lat_off *= (double)(1ULL << step);
    lon_off *= (double)(1ULL << step);
    out->bits = interleave((uint32_t)lat_off, (uint32_t)lon_off);
    out->step = step;
    return 1;
}

int geo_decode(const struct geo_range *lon_r, const struct geo_range *lat_r, struct geo_cell cell,
               struct geo_area *out) {
    if ((cell.bits == 0 && cell.step == 0) || lon_r->max == lon_r->min || lat_r->max == lat_r->min) return 0;
    uint32_t ilat = gather32(cell.bits);
    uint32_t ilon = gather32(cell.bits >> 1);
    double cells = (double)(1ULL << cell.step);
    double lat_scale = lat_r->max - lat_r->min;
    double lon_scale = lon_r->max - lon_r->min;
    out->lat.min = lat_r->min + (ilat * 1.0 / cells) * lat_scale;
    out->lat.max = lat_r->min + ((ilat + 1) * 1.0 / cells) * lat_scale;
    out->lon.min = lon_r->min + (ilon * 1.0 / cells) * lon_scale;
    out->lon.max = lon_r->min + ((ilon + 1) * 1.0 / cells) * lon_scale;
    return 1;
}

int geo_score_of(double lon, double lat, double *score) {
    struct geo_cell c;
    if (!geo_encode(&geo_lon_range, &geo_lat_range, lon, lat, GEO_STEP_MAX, &c)) return 0;
    *score = (double)c.bits;
    return 1;
}

int geo_score_decode(double score, double xy[2]) {
    /* Scores of a plain sorted set may be anything; those that are not a
     * non-negative integer-valued 64-bit quantity saturate instead of
     * invoking an undefined conversion. */
    uint64_t bits;
    if (!(score > 0))
        bits = 0;
    else if (score >= 18446744073709551616.0)
        bits = UINT64_MAX;
    else
        bits = (uint64_t)score;
    struct geo_cell c = {bits, GEO_STEP_MAX};
    struct geo_area a;
    if (!geo_decode(&geo_lon_range, &geo_lat_range, c, &a)) return 0;
    xy[0] = (a.lon.min + a.lon.max) / 2;
    if (xy[0] > GEO_LON_MAX) xy[0] = GEO_LON_MAX;
    if (xy[0] < GEO_LON_MIN) xy[0] = GEO_LON_MIN;
    xy[1] = (a.lat.min + a.lat.max) / 2;
    if (xy[1] > GEO_LAT_MAX) xy[1] = GEO_LAT_MAX;
    if (xy[1] < GEO_LAT_MIN) xy[1] = GEO_LAT_MIN;
    return 1;
}

int geo_score_hashstr(double score, char out[12]) {
    static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    double xy[2];
    if (!geo_score_decode(score, xy)) return 0;
    /* The standard geohash covers latitudes -90..90, unlike the stored
     * scores, so the point is re-encoded before printing. */
    const struct geo_range lon_r = {-180, 180}, lat_r = {-90, 90};
    struct geo_cell c = {0, 0};
    if (!geo_encode(&lon_r, &lat_r, xy[0], xy[1], GEO_STEP_MAX, &c)) c.bits = 0;
    for (int i = 0; i < 10; i++) out[i] = alphabet[(c.bits >> (52 - (i + 1) * 5)) & 0x1f];
    /* 52 bits give ten characters and two bits; the eleventh character is
     * printed as if the missing bits were zero, for compatibility. */
    out[10] = alphabet[0];
    out[11] = '\0';
    return 1;
}

double geo_lat_distance(double lat1, double lat2) {
    return GEO_EARTH_RADIUS_M * fabs(deg2rad(lat2) - deg2rad(lat1));
}

double geo_distance(double lon1, double lat1, double lon2, double lat2) {
    double lon1r = deg2rad(lon1), lon2r = deg2rad(lon2);
    double v = sin((lon2r - lon1r) / 2);
    /* Same meridian: the haversine reduces to the latitude difference. */
    if (v == 0.0) return geo_lat_distance(lat1, lat2);
    double lat1r = deg2rad(lat1), lat2r = deg2rad(lat2);
    double u = sin((lat2r - lat1r) / 2);
    double a = u * u + cos(lat1r) * cos(lat2r) * v * v;
    return 2.0 * GEO_EARTH_RADIUS_M * asin(sqrt(a));
}

int geo_in_shape(const struct geo_shape *s, double lon, double lat, double *dist) {
    if (s->type == GEO_SHAPE_RADIUS) {
        *dist = geo_distance(s->xy[0], s->xy[1], lon, lat);
        return *dist <= s->radius * s->conversion;
    }
    double w = s->width * s->conversion, h = s->height * s->conversion;
    /* The latitude test is the cheap one, so it goes first. */
    if (geo_lat_distance(lat, s->xy[1]) > h / 2) return 0;
    if (geo_distance(lon, lat, s->xy[0], lat) > w / 2) return 0;
    *dist = geo_distance(s->xy[0], s->xy[1], lon, lat);
    return 1;
}

/* Bits per coordinate of the cells to search for a radius in metres: the
 * finest level whose cell is still about as large as the radius, coarser
 * near the poles where cells shrink. */
static int geo_step_for_radius(double meters, double lat) {
    if (meters == 0) return GEO_STEP_MAX;
    const double mercator_max = 20037726.37;
    int step = 1;
    while (meters < mercator_max) {
        meters *= 2;
        step++;
    }
    step -= 2;
    if (lat > 66 || lat < -66) {
        step--;
        if (lat > 80 || lat < -80) step--;
    }
    if (step < 1) step = 1;
    if (step > GEO_STEP_MAX) step = GEO_STEP_MAX;
    return step;
}

/* Move a cell by dlon / dlat cells, wrapping around the grid. */
static struct geo_cell geo_move(struct geo_cell c, int dlon, int dlat) {
    uint32_t mask = (uint32_t)((1ULL << c.step) - 1);
    uint32_t lat = gather32(c.bits), lon = gather32(c.bits >> 1);
    lat = (uint32_t)(lat + (uint32_t)dlat) & mask;
    lon = (uint32_t)(lon + (uint32_t)dlon) & mask;
    c.bits = interleave(lat, lon);
    return c;
}

/* Order of the cells: centre, N, S, E, W, NE, NW, SE, SW. */
enum { C_SELF, C_N, C_S, C_E, C_W, C_NE, C_NW, C_SE, C_SW };

static void geo_cells_around(struct geo_cell c, struct geo_cell out[9]) {
    out[C_SELF] = c;
    out[C_N] = geo_move(c, 0, 1);
    out[C_S] = geo_move(c, 0, -1);
    out[C_E] = geo_move(c, 1, 0);
    out[C_W] = geo_move(c, -1, 0);
    out[C_NE] = geo_move(c, 1, 1);
    out[C_NW] = geo_move(c, -1, 1);
    out[C_SE] = geo_move(c, 1, -1);
    out[C_SW] = geo_move(c, -1, -1);
}

/* Bounding box of the shape: longitudes widen away from the equator, so
 * the side nearer the pole sets the longitude span. */
static void geo_bounds(struct geo_shape *s) {
    double lon = s->xy[0], lat = s->xy[1];
    double h = s->conversion * (s->type == GEO_SHAPE_RADIUS ? s->radius : s->height / 2);
    double w = s->conversion * (s->type == GEO_SHAPE_RADIUS ? s->radius : s->width / 2);
    double dlat = rad2deg(h / GEO_EARTH_RADIUS_M);
    double dlon_top = rad2deg(w / GEO_EARTH_RADIUS_M / cos(deg2rad(lat + dlat)));
    double dlon_bottom = rad2deg(w / GEO_EARTH_RADIUS_M / cos(deg2rad(lat - dlat)));
    double dlon = lat < 0 ? dlon_bottom : dlon_top;
    s->bounds[0] = lon - dlon;
    s->bounds[2] = lon + dlon;
    s->bounds[1] = lat - dlat;
    s->bounds[3] = lat + dlat;
}

void geo_cover(struct geo_shape *s, struct geo_cell cells[9]) {
    geo_bounds(s);
    double min_lon = s->bounds[0], min_lat = s->bounds[1], max_lon = s->bounds[2], max_lat = s->bounds[3];
    double r = s->type == GEO_SHAPE_RADIUS ? s->radius
                                           : sqrt((s->width / 2) * (s->width / 2) + (s->height / 2) * (s->height / 2));
    r *= s->conversion;
    int step = geo_step_for_radius(r, s->xy[1]);
    struct geo_cell c;
    struct geo_area area, n, so, e, w;
    geo_encode(&geo_lon_range, &geo_lat_range, s->xy[0], s->xy[1], step, &c);
    geo_cells_around(c, cells);
    geo_decode(&geo_lon_range, &geo_lat_range, c, &area);
    /* The estimate can be one level too fine when the shape reaches past
     * a neighbour; then one level coarser covers it. */
    geo_decode(&geo_lon_range, &geo_lat_range, cells[C_N], &n);
    geo_decode(&geo_lon_range, &geo_lat_range, cells[C_S], &so);
    geo_decode(&geo_lon_range, &geo_lat_range, cells[C_E], &e);
    geo_decode(&geo_lon_range, &geo_lat_range, cells[C_W], &w);
    int coarser = n.lat.max < max_lat || so.lat.min > min_lat || e.lon.max < max_lon || w.lon.min > min_lon;
    if (step > 1 && coarser) {
        step--;
        geo_encode(&geo_lon_range, &geo_lat_range, s->xy[0], s->xy[1], step, &c);
        geo_cells_around(c, cells);
        geo_decode(&geo_lon_range, &geo_lat_range, c, &area);
    }
    /* Drop the neighbours on a side the shape does not reach. */
    if (step >= 2) {
        static const struct geo_cell none = {0, 0};
        if (area.lat.min < min_lat) cells[C_S] = cells[C_SW] = cells[C_SE] = none;
        if (area.lat.max > max_lat) cells[C_N] = cells[C_NE] = cells[C_NW] = none;
        if (area.lon.min < min_lon) cells[C_W] = cells[C_SW] = cells[C_NW] = none;
        if (area.lon.max > max_lon) cells[C_E] = cells[C_SE] = cells[C_NE] = none;
    }
}

void geo_cell_scores(struct geo_cell c, double *min, double *max) {
    int shift = 52 - c.step * 2;
    *min = (double)(c.bits << shift);
    *max = (double)((c.bits + 1) << shift);
}
