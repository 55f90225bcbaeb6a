/* geohash.h - the geographic index used by the GEO commands: 52-bit
 * interleaved geohashes over Redis's Web-Mercator-safe coordinate limits,
 * cell neighbours, the search-cell cover for a radius or box, and the
 * haversine distance. Pure arithmetic with no server state; the commands
 * (src/cmd/geo.c) keep the hashes as sorted set scores. Not a general
 * geodesy library: distances assume a spherical earth of Redis's radius. */
#ifndef HK_GEOHASH_H
#define HK_GEOHASH_H

#include <stdint.h>

#define GEO_LON_MIN (-180.0)
#define GEO_LON_MAX 180.0
#define GEO_LAT_MIN (-85.05112878)
#define GEO_LAT_MAX 85.05112878
/* Bits per coordinate of a stored score: 26 + 26 = 52 fit a double exactly. */
#define GEO_STEP_MAX 26
#define GEO_EARTH_RADIUS_M 6372797.560856

struct geo_range {
    double min, max;
};

/* A cell: `step` bits per coordinate, latitude bits in the even positions
 * and longitude bits in the odd ones. step 0 marks an unused cell. */
struct geo_cell {
    uint64_t bits;
    int step;
};

struct geo_area {
    struct geo_range lon, lat;
};

enum { GEO_SHAPE_RADIUS = 1, GEO_SHAPE_BOX = 2 };

/* A search shape. Sizes are in the caller's unit; conversion turns them
 * into metres. xy is the centre (longitude, latitude). */
struct geo_shape {
    int type;
    double xy[2];
    double conversion;
    double radius;
    double width, height;
    double bounds[4]; /* min lon, min lat, max lon, max lat (filled by geo_cover) */
};

/* Encode a point at `step` bits per coordinate within the given ranges.
 * Returns 0 when the point lies outside them or outside Redis's limits. */
int geo_encode(const struct geo_range *lon_r, const struct geo_range *lat_r, double lon, double lat, int step,
               struct geo_cell *out);
/* The area a cell covers within the given ranges; 0 for an unused cell. */
int geo_decode(const struct geo_range *lon_r, const struct geo_range *lat_r, struct geo_cell cell,
               struct geo_area *out);
/* The stored score of a point (its 52-bit hash). Returns 0 when invalid. */
int geo_score_of(double lon, double lat, double *score);
/* Centre of the cell a score names, clamped to the limits; 0 when the
 * score cannot name a cell. */
int geo_score_decode(double score, double xy[2]);
/* The standard 11-character base32 geohash (latitude range -90..90) of a
 * point given as a stored score. out gets 11 chars and a NUL. */
int geo_score_hashstr(double score, char out[12]);

/* Great-circle distance in metres (haversine). */
double geo_distance(double lon1, double lat1, double lon2, double lat2);
/* Distance between two latitudes along a meridian, in metres. */
double geo_lat_distance(double lat1, double lat2);

/* The up-to-nine cells (centre first, then N, S, E, W, NE, NW, SE, SW)
 * whose score ranges cover the shape; unused ones have step 0. Fills
 * shape->bounds. */
void geo_cover(struct geo_shape *shape, struct geo_cell cells[9]);
/* Score interval [*min, *max) of the points inside a cell. */
void geo_cell_scores(struct geo_cell cell, double *min, double *max);
/* 1 when the point (lon, lat) lies within the shape; *dist gets its
 * distance in metres from the centre. */
int geo_in_shape(const struct geo_shape *shape, double lon, double lat, double *dist);

#endif
