"""GEO commands: GEOADD (NX, XX, CH), GEODIST, GEOHASH, GEOPOS, GEOSEARCH,
GEOSEARCHSTORE and the GEORADIUS family (with STORE/STOREDIST and the _RO
variants).

Every expected reply below is the exact wire form a real Redis 7.0.15
(`redis-server --save ""`) sent for the same command sequence, recorded once
and hard-coded so the test needs no Redis (scores in ZRANGE replies re-printed in
7.2's shortest round-trip form; 7.0 used %.17g): distances as "%.4f" bulk strings,
coordinates in the human long double form (RESP3 doubles), 11-character
geohashes, integer hashes, and Redis's error strings. The large scenarios
check both zset encodings, the cell cover chosen for each radius (the order
of unsorted results is the order cells are scanned), searches near the poles
and across the antimeridian, COUNT, ANY, ASC/DESC and the STORE forms."""
import pytest
from resp import Error

def _lcg(seed):
    x = seed
    while True:
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        yield x >> 11


def _points(n, seed, lon0, lat0, spread_lon, spread_lat):
    g = _lcg(seed)
    out = []
    for i in range(n):
        a = next(g) / float(1 << 53)
        b = next(g) / float(1 << 53)
        lon = round(lon0 + (a - 0.5) * spread_lon, 6)
        lat = round(lat0 + (b - 0.5) * spread_lat, 6)
        out.append((lon, lat, "p%d" % i))
    return out


def _geoadd(key, pts):
    cmd = ["GEOADD", key]
    for lon, lat, m in pts:
        cmd += [repr(lon), repr(lat), m]
    return cmd


SICILY = ["GEOADD", "Sicily", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"]

SCENARIOS = {
    "basic": (2, [
        SICILY,
        ["GEODIST", "Sicily", "Palermo", "Catania"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "km"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "MI"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "ft"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "m"],
        ["GEODIST", "Sicily", "Palermo", "Palermo"],
        ["GEODIST", "Sicily", "Palermo", "Nowhere"],
        ["GEODIST", "nokey", "Palermo", "Catania"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "yd"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "km", "x"],
        ["GEOHASH", "Sicily", "Palermo", "Catania", "Nowhere"],
        ["GEOHASH", "nokey", "a", "b"],
        ["GEOHASH", "Sicily"],
        ["GEOPOS", "Sicily", "Palermo", "Nowhere", "Catania"],
        ["GEOPOS", "nokey", "a"],
        ["GEOPOS", "Sicily"],
        ["ZRANGE", "Sicily", "0", "-1", "WITHSCORES"],
        ["OBJECT", "ENCODING", "Sicily"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHCOORD"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "WITHCOORD", "WITHHASH", "DESC"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "withhash", "asc", "count", "1"],
        ["GEORADIUS", "Sicily", "15", "37", "100", "km"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1", "ANY"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1", "ANY", "DESC"],
        ["GEORADIUSBYMEMBER", "Sicily", "Palermo", "200", "km", "WITHDIST"],
        ["GEORADIUSBYMEMBER", "Sicily", "Palermo", "0", "m", "WITHDIST"],
        ["GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "WITHDIST"],
        ["GEORADIUSBYMEMBER_RO", "Sicily", "Catania", "500", "mi", "WITHDIST", "DESC"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC", "WITHDIST", "WITHCOORD"],
        ["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "400", "400", "km", "ASC", "WITHDIST", "WITHHASH"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "DESC"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "100", "400", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "100", "km"],
        ["GEOSEARCH", "Sicily", "BYRADIUS", "200", "km", "FROMLONLAT", "15", "37", "COUNT", "1"],
        ["GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"],
        ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        ["GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STOREDIST", "DESC", "COUNT", "1"],
        ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        ["GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "m"],
        ["EXISTS", "dst"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "st"],
        ["ZRANGE", "st", "0", "-1", "WITHSCORES"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "STOREDIST", "st2", "ASC"],
        ["ZRANGE", "st2", "0", "-1", "WITHSCORES"],
        ["GEORADIUSBYMEMBER", "Sicily", "Palermo", "100", "mi", "STORE", "st", "STOREDIST", "st3"],
        ["EXISTS", "st", "st3"],
        ["ZRANGE", "st3", "0", "-1", "WITHSCORES"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "Sicily"],
        ["ZRANGE", "Sicily", "0", "-1", "WITHSCORES"],
    ]),
    "geoadd_options": (2, [
        SICILY,
        ["GEOADD", "Sicily", "NX", "13.1", "38.1", "Palermo", "14", "37", "Agrigento"],
        ["GEOPOS", "Sicily", "Palermo", "Agrigento"],
        ["GEOADD", "Sicily", "XX", "13.2", "38.2", "Palermo", "12", "37.5", "Marsala"],
        ["GEOPOS", "Sicily", "Palermo", "Marsala"],
        ["GEOADD", "Sicily", "XX", "CH", "13.3", "38.3", "Palermo", "15.087269", "37.502669", "Catania"],
        ["GEOADD", "Sicily", "CH", "13.4", "38.4", "Palermo", "15.5", "37.1", "Siracusa"],
        ["GEOADD", "Sicily", "ch", "nx", "13.5", "38.5", "Palermo", "15.5", "37.1", "Siracusa"],
        ["GEOADD", "Sicily", "13.4", "38.4", "Palermo"],
        ["GEOADD", "new", "XX", "1", "2", "a"],
        ["EXISTS", "new"],
        ["GEOADD", "Sicily", "NX", "XX", "1", "2", "a"],
        ["GEOADD", "Sicily", "1", "2", "a", "3"],
        ["GEOADD", "Sicily", "ch", "ch", "ch"],
        ["GEOADD", "Sicily", "181", "2", "a"],
        ["GEOADD", "Sicily", "1", "85.06", "a"],
        ["GEOADD", "Sicily", "-180.5", "-85.1", "a"],
        ["GEOADD", "Sicily", "1", "2", "a", "200", "2", "b"],
        ["GEOADD", "Sicily", "x", "2", "a"],
        ["GEOADD", "Sicily", "1", "nan", "a"],
        ["GEOADD", "Sicily", "1", "inf", "a"],
        ["GEOADD", "Sicily", "1", " 2", "a"],
        ["ZCARD", "Sicily"],
        ["GEOADD", "edge", "180", "85.05112878", "ne", "-180", "-85.05112878", "sw", "0", "0", "zero",
         "-180", "85.05112878", "nw", "180", "-85.05112878", "se", "179.9999999", "85.0511287", "near"],
        ["ZRANGE", "edge", "0", "-1", "WITHSCORES"],
        ["GEOPOS", "edge", "ne", "sw", "zero", "nw", "se", "near"],
        ["GEOHASH", "edge", "ne", "sw", "zero", "nw", "se", "near"],
        ["GEODIST", "edge", "ne", "sw", "km"],
        ["GEODIST", "edge", "nw", "ne"],
        ["GEODIST", "edge", "zero", "near", "mi"],
        ["ZADD", "plain", "1.5", "a", "4503599627370495", "b", "0", "c"],
        ["GEOPOS", "plain", "a", "b", "c"],
        ["GEOHASH", "plain", "a", "b", "c"],
        ["GEODIST", "plain", "a", "b"],
    ]),
    "errors": (2, [
        SICILY,
        ["SET", "str", "x"],
        ["GEOADD", "str", "1", "2", "a"],
        ["GEOADD", "str", "1", "200", "a"],
        ["GEODIST", "str", "a", "b"],
        ["GEODIST", "str", "a", "b", "parsec"],
        ["GEOHASH", "str", "a"],
        ["GEOPOS", "str", "a"],
        ["GEORADIUS", "str", "1", "2", "3", "km"],
        ["GEORADIUS", "str", "1", "200", "3", "km"],
        ["GEORADIUSBYMEMBER", "str", "a", "3", "km"],
        ["GEORADIUS_RO", "str", "1", "2", "3", "km"],
        ["GEORADIUSBYMEMBER_RO", "str", "a", "3", "km"],
        ["GEOSEARCH", "str", "FROMLONLAT", "1", "2", "BYRADIUS", "3", "km"],
        ["GEOSEARCHSTORE", "d", "str", "FROMLONLAT", "1", "2", "BYRADIUS", "3", "km"],
        ["GEOSEARCHSTORE", "str", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "300", "km"],
        ["TYPE", "str"],
        ["GEORADIUSBYMEMBER", "Sicily", "Nowhere", "3", "km"],
        ["GEOSEARCH", "Sicily", "FROMMEMBER", "Nowhere", "BYRADIUS", "3", "km"],
        ["GEORADIUS", "Sicily", "15", "37", "-1", "km"],
        ["GEORADIUS", "Sicily", "15", "37", "abc", "km"],
        ["GEORADIUS", "Sicily", "15", "37", "nan", "km"],
        ["GEORADIUS", "Sicily", "15", "37", "1", "parsec"],
        ["GEORADIUS", "Sicily", "15", "37", "abc", "parsec"],
        ["GEORADIUS", "Sicily", "x", "37", "1", "km"],
        ["GEORADIUS", "Sicily", "15", "91", "1", "km"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "0"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "-3"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "x"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "ANY"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "bogus"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "x", "WITHDIST"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHHASH", "STOREDIST", "x"],
        ["GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "STORE", "x"],
        ["GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", "200", "km", "STOREDIST", "x"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "FROMLONLAT", "1", "2"],
        ["GEOSEARCH", "Sicily", "BYRADIUS", "200", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37"],
        ["geosearch", "Sicily", "FROMLONLAT", "15", "37", "WITHDIST"],
        ["GeoSearch", "Sicily", "BYBOX", "1", "1", "km", "WITHDIST"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "BYBOX", "1", "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "1", "km", "BYRADIUS", "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "-1", "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "-1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "w", "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "h", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "1", "au"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "1"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "ANY"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "STORE", "x"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "STOREDIST"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "200", "37", "BYRADIUS", "1", "km"],
        ["GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "WITHDIST"],
        ["GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STORE", "x"],
        ["GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "WITHCOORD", "STOREDIST"],
        ["GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "COUNT", "0"],
        ["GEOADD", "k", "1", "2"],
        ["GEODIST", "k", "a"],
        ["GEOSEARCH", "k", "FROMLONLAT", "1", "2"],
        ["GEOSEARCHSTORE", "d", "k", "FROMLONLAT", "1", "2"],
        ["GEORADIUS", "k", "1", "2", "3"],
        ["GEORADIUSBYMEMBER", "k", "1", "2"],
        ["GEOHASH"],
        ["GEOPOS"],
    ]),
    "missing_key": (2, [
        ["SET", "dst", "x"],
        ["GEOSEARCH", "nokey", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"],
        ["GEOSEARCH", "nokey", "FROMMEMBER", "m", "BYRADIUS", "200", "km"],
        ["GEOSEARCH", "nokey", "FROMMEMBER", "m", "BYRADIUS", "-1", "km"],
        ["GEOSEARCH", "nokey", "FROMMEMBER", "m"],
        ["GEORADIUSBYMEMBER", "nokey", "m", "200", "km"],
        ["GEORADIUSBYMEMBER", "nokey", "m", "abc", "parsec"],
        ["GEORADIUSBYMEMBER", "nokey", "m", "abc", "parsec", "COUNT", "0"],
        ["GEORADIUS", "nokey", "15", "37", "200", "km"],
        ["GEORADIUS", "nokey", "15", "37", "-200", "km"],
        ["GEOSEARCHSTORE", "dst", "nokey", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"],
        ["EXISTS", "dst"],
        ["SET", "dst", "x"],
        ["GEORADIUS", "nokey", "15", "37", "200", "km", "STORE", "dst"],
        ["EXISTS", "dst"],
        ["SET", "dst", "x"],
        ["GEORADIUSBYMEMBER", "nokey", "m", "200", "km", "STOREDIST", "dst"],
        ["EXISTS", "dst"],
        ["GEORADIUS", "nokey", "15", "37", "200", "km", "STORE", "dst"],
    ]),
    "resp3": (3, [
        SICILY,
        ["GEOPOS", "Sicily", "Palermo", "Nowhere"],
        ["GEOPOS", "nokey", "a"],
        ["GEOHASH", "Sicily", "Catania", "Nowhere"],
        ["GEODIST", "Sicily", "Palermo", "Catania"],
        ["GEODIST", "Sicily", "Palermo", "Nowhere"],
        ["GEODIST", "nokey", "a", "b"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "WITHCOORD", "WITHHASH", "ASC"],
        ["GEOSEARCH", "Sicily", "FROMMEMBER", "Catania", "BYBOX", "500", "500", "mi", "WITHCOORD", "DESC"],
        ["GEOSEARCH", "Sicily", "FROMMEMBER", "Catania", "BYRADIUS", "1", "m"],
        ["GEOSEARCHSTORE", "d", "Sicily", "FROMMEMBER", "Catania", "BYRADIUS", "500", "km", "STOREDIST"],
        ["ZRANGE", "d", "0", "-1", "WITHSCORES"],
    ]),
}

# Large sets: a listpack-sized one and a skiplist one, searched with radii
# that pick different steps, unsorted (cell order), sorted and counted.
_EU = _points(120, 7, 10.0, 45.0, 8.0, 6.0)
_BIG = _points(600, 11, 10.0, 45.0, 40.0, 30.0)
_POLE = _points(150, 13, 0.0, 83.0, 360.0, 4.0)
_DATELINE = _points(100, 17, 179.5, -10.0, 1.2, 1.0) + _points(100, 19, -179.5, -10.0, 1.2, 1.0)
_DATELINE = [(lon if lon <= 180 else lon - 360, lat, m + "_%d" % i) for i, (lon, lat, m) in enumerate(_DATELINE)]
_DATELINE = [(lon if lon >= -180 else lon + 360, lat, m) for lon, lat, m in _DATELINE]


def _searches(key, lon, lat, member):
    out = []
    for r in ("1", "25", "80", "300", "1500", "5000"):
        out.append(["GEOSEARCH", key, "FROMLONLAT", lon, lat, "BYRADIUS", r, "km"])
        out.append(["GEOSEARCH", key, "FROMLONLAT", lon, lat, "BYRADIUS", r, "km", "ASC", "WITHDIST", "COUNT", "7"])
        out.append(["GEOSEARCH", key, "FROMLONLAT", lon, lat, "BYBOX", r, str(int(r) * 2), "km", "DESC", "COUNT", "5", "WITHHASH"])
        out.append(["GEOSEARCH", key, "FROMMEMBER", member, "BYRADIUS", r, "km", "COUNT", "4", "ANY"])
    out.append(["GEORADIUS", key, lon, lat, "400", "km", "COUNT", "10", "ANY", "ASC", "WITHDIST"])
    out.append(["GEOSEARCHSTORE", "out", key, "FROMLONLAT", lon, lat, "BYRADIUS", "300", "km", "STOREDIST"])
    out.append(["ZRANGE", "out", "0", "-1", "WITHSCORES"])
    out.append(["OBJECT", "ENCODING", "out"])
    return out


SCENARIOS["listpack_set"] = (2, [_geoadd("eu", _EU), ["OBJECT", "ENCODING", "eu"]] + _searches("eu", "10.2", "45.1", "p3"))
SCENARIOS["skiplist_set"] = (2, [_geoadd("big", _BIG), ["OBJECT", "ENCODING", "big"]] + _searches("big", "9.5", "44.2", "p9")
                             + [["GEOHASH", "big", "p0", "p1", "p2"], ["GEOPOS", "big", "p0", "p599"]])
SCENARIOS["pole"] = (2, [_geoadd("pole", _POLE)] + _searches("pole", "20", "84.5", "p5"))
SCENARIOS["dateline"] = (2, [_geoadd("dl", _DATELINE)] + _searches("dl", "179.95", "-10.1", "p1_1"))
_WORLD = _points(200, 23, 0.0, 0.0, 359.0, 170.0)
SCENARIOS["extremes"] = (2, [
    _geoadd("w", _WORLD),
    ["GEOSEARCH", "w", "FROMLONLAT", "0", "0", "BYRADIUS", "0", "m"],
    ["GEOSEARCH", "w", "FROMMEMBER", "p7", "BYRADIUS", "0", "m", "WITHDIST", "WITHHASH"],
    ["GEOSEARCH", "w", "FROMMEMBER", "p7", "BYBOX", "0", "0", "m", "WITHDIST"],
    ["GEOSEARCH", "w", "FROMLONLAT", "0", "0", "BYRADIUS", "20000", "km", "COUNT", "15", "WITHDIST"],
    ["GEOSEARCH", "w", "FROMLONLAT", "0", "0", "BYRADIUS", "7000", "km"],
    ["GEOSEARCH", "w", "FROMLONLAT", "100", "-60", "BYRADIUS", "3000", "km", "DESC", "WITHDIST"],
    ["GEOSEARCH", "w", "FROMLONLAT", "-120", "-30", "BYBOX", "4000", "2500", "km", "ASC", "WITHDIST"],
    ["GEOSEARCH", "w", "FROMLONLAT", "-120", "-30", "BYBOX", "4000", "2500", "km"],
    ["GEOSEARCH", "w", "FROMLONLAT", "60", "70", "BYBOX", "3000", "3000", "mi", "ASC"],
    ["GEOSEARCH", "w", "FROMLONLAT", "0", "0", "BYRADIUS", "inf", "m", "COUNT", "3"],
    ["GEOSEARCH", "w", "FROMLONLAT", "0", "0", "BYRADIUS", "100", "km", "COUNT", "1000"],
    ["GEOSEARCH", "w", "FROMLONLAT", "0", "0", "BYRADIUS", "9000", "km", "COUNT", "6", "ANY"],
    ["GEOSEARCH", "w", "FROMLONLAT", "0", "0", "BYRADIUS", "9000", "km", "COUNT", "6", "ANY", "DESC", "WITHDIST"],
    ["GEOSEARCH", "w", "FROMLONLAT", "-179.9", "84", "BYRADIUS", "2500", "km", "WITHDIST", "ASC"],
    ["GEORADIUSBYMEMBER", "w", "p0", "5000", "km", "STORE", "w"],
    ["ZRANGE", "w", "0", "-1", "WITHSCORES"],
    ["GEORADIUS", "w", "1", "2", "1", "km", "STORE", "w"],
    ["EXISTS", "w"],
])

GOLDEN = {
    'basic': [
        b':2\r\n',
        b'$11\r\n166274.1516\r\n',
        b'$8\r\n166.2742\r\n',
        b'$8\r\n103.3182\r\n',
        b'$11\r\n545518.8700\r\n',
        b'$11\r\n166274.1516\r\n',
        b'$6\r\n0.0000\r\n',
        b'$-1\r\n',
        b'$-1\r\n',
        b'-ERR unsupported unit provided. please use M, KM, FT, MI\r\n',
        b'-ERR syntax error\r\n',
        b'*3\r\n$11\r\nsqc8b49rny0\r\n$11\r\nsqdtr74hyu0\r\n$-1\r\n',
        b'*2\r\n$-1\r\n$-1\r\n',
        b'*0\r\n',
        b'*3\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n*-1\r\n*2\r\n$20\r\n15.08726745843887329\r\n$20\r\n37.50266842333162032\r\n',
        b'*1\r\n*-1\r\n',
        b'*0\r\n',
        b'*4\r\n$7\r\nPalermo\r\n$16\r\n3479099956230698\r\n$7\r\nCatania\r\n$16\r\n3479447370796909\r\n',
        b'$8\r\nlistpack\r\n',
        b'*2\r\n$7\r\nPalermo\r\n$7\r\nCatania\r\n',
        b'*2\r\n*2\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n*2\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n',
        b'*2\r\n*2\r\n$7\r\nPalermo\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n*2\r\n$7\r\nCatania\r\n*2\r\n$20\r\n15.08726745843887329\r\n$20\r\n37.50266842333162032\r\n',
        b'*2\r\n*4\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n:3479099956230698\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n*4\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n:3479447370796909\r\n*2\r\n$20\r\n15.08726745843887329\r\n$20\r\n37.50266842333162032\r\n',
        b'*1\r\n*2\r\n$7\r\nCatania\r\n:3479447370796909\r\n',
        b'*1\r\n$7\r\nCatania\r\n',
        b'*1\r\n$7\r\nPalermo\r\n',
        b'*1\r\n$7\r\nPalermo\r\n',
        b'*2\r\n*2\r\n$7\r\nPalermo\r\n$6\r\n0.0000\r\n*2\r\n$7\r\nCatania\r\n$8\r\n166.2742\r\n',
        b'*1\r\n*2\r\n$7\r\nPalermo\r\n$6\r\n0.0000\r\n',
        b'*2\r\n*2\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n*2\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n',
        b'*2\r\n*2\r\n$7\r\nPalermo\r\n$8\r\n103.3182\r\n*2\r\n$7\r\nCatania\r\n$6\r\n0.0000\r\n',
        b'*2\r\n*3\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n*2\r\n$20\r\n15.08726745843887329\r\n$20\r\n37.50266842333162032\r\n*3\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n',
        b'*2\r\n*3\r\n$7\r\nPalermo\r\n$6\r\n0.0000\r\n:3479099956230698\r\n*3\r\n$7\r\nCatania\r\n$8\r\n166.2742\r\n:3479447370796909\r\n',
        b'*2\r\n$7\r\nPalermo\r\n$7\r\nCatania\r\n',
        b'*1\r\n$7\r\nCatania\r\n',
        b'*0\r\n',
        b'*1\r\n$7\r\nCatania\r\n',
        b':2\r\n',
        b'*4\r\n$7\r\nPalermo\r\n$16\r\n3479099956230698\r\n$7\r\nCatania\r\n$16\r\n3479447370796909\r\n',
        b':1\r\n',
        b'*2\r\n$7\r\nPalermo\r\n$18\r\n190.44242984775784\r\n',
        b':0\r\n',
        b':0\r\n',
        b':2\r\n',
        b'*4\r\n$7\r\nPalermo\r\n$16\r\n3479099956230698\r\n$7\r\nCatania\r\n$16\r\n3479447370796909\r\n',
        b':2\r\n',
        b'*4\r\n$7\r\nCatania\r\n$16\r\n56.4412578701582\r\n$7\r\nPalermo\r\n$18\r\n190.44242984775784\r\n',
        b':1\r\n',
        b':2\r\n',
        b'*2\r\n$7\r\nPalermo\r\n$1\r\n0\r\n',
        b':2\r\n',
        b'*4\r\n$7\r\nPalermo\r\n$16\r\n3479099956230698\r\n$7\r\nCatania\r\n$16\r\n3479447370796909\r\n',
    ],
    'geoadd_options': [
        b':2\r\n',
        b':1\r\n',
        b'*2\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n*2\r\n$20\r\n14.00000184774398804\r\n$20\r\n37.00000026605963654\r\n',
        b':0\r\n',
        b'*2\r\n*2\r\n$19\r\n13.2000008225440979\r\n$19\r\n38.2000006309196749\r\n*-1\r\n',
        b':1\r\n',
        b':2\r\n',
        b':0\r\n',
        b':0\r\n',
        b':0\r\n',
        b':0\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR invalid longitude,latitude pair 181.000000,2.000000\r\n',
        b'-ERR invalid longitude,latitude pair 1.000000,85.060000\r\n',
        b'-ERR invalid longitude,latitude pair -180.500000,-85.100000\r\n',
        b'-ERR invalid longitude,latitude pair 200.000000,2.000000\r\n',
        b'-ERR value is not a valid float\r\n',
        b'-ERR value is not a valid float\r\n',
        b'-ERR invalid longitude,latitude pair 1.000000,inf\r\n',
        b'-ERR value is not a valid float\r\n',
        b':4\r\n',
        b':6\r\n',
        b'*12\r\n$2\r\nsw\r\n$1\r\n0\r\n$4\r\nzero\r\n$16\r\n3377699720527872\r\n$4\r\nnear\r\n$16\r\n4503599627370495\r\n$2\r\nnw\r\n$16\r\n4503599627370496\r\n$2\r\nse\r\n$16\r\n9007199254740992\r\n$2\r\nne\r\n$17\r\n13510798882111488\r\n',
        b'*6\r\n*2\r\n$3\r\n180\r\n$19\r\n85.0511287799999991\r\n*2\r\n$22\r\n-179.99999731779098511\r\n$21\r\n-85.05112751263942528\r\n*2\r\n$19\r\n0.00000268220901489\r\n$19\r\n0.00000126736058093\r\n*2\r\n$22\r\n-179.99999731779098511\r\n$19\r\n85.0511287799999991\r\n*2\r\n$3\r\n180\r\n$21\r\n-85.05112751263942528\r\n*2\r\n$21\r\n179.99999731779098511\r\n$20\r\n85.05112751263942528\r\n',
        b'*6\r\n$11\r\nbp05b5048p0\r\n$11\r\n00bh0hbj200\r\n$11\r\ns0000000000\r\n$11\r\nbp05b5048p0\r\n$11\r\n00bh0hbj200\r\n$11\r\nzzpgzgpfxz0\r\n',
        b'$10\r\n18919.8446\r\n',
        b'$6\r\n0.0257\r\n',
        b'$9\r\n6562.2004\r\n',
        b':3\r\n',
        b'*3\r\n*2\r\n$22\r\n-179.99999731779098511\r\n$21\r\n-85.05112497791824921\r\n*2\r\n$21\r\n179.99999731779098511\r\n$20\r\n85.05112751263942528\r\n*2\r\n$22\r\n-179.99999731779098511\r\n$21\r\n-85.05112751263942528\r\n',
        b'*3\r\n$11\r\n00bh0hbj210\r\n$11\r\nzzpgzgpfxz0\r\n$11\r\n00bh0hbj200\r\n',
        b'$13\r\n18919844.1662\r\n',
    ],
    'errors': [
        b':2\r\n',
        b'+OK\r\n',
        b'-WRONGTYPE Operation against a key holding the wrong kind of value\r\n',
        b'-ERR invalid longitude,latitude pair 1.000000,200.000000\r\n',
        b'-WRONGTYPE Operation against a key holding the wrong kind of value\r\n',
        b'-ERR unsupported unit provided. please use M, KM, FT, MI\r\n',
        b'-WRONGTYPE Operation against a key holding the wrong kind of value\r\n',
        b'-WRONGTYPE Operation against a key holding the wrong kind of value\r\n',
        b'-WRONGTYPE Operation against a key holding the wrong kind of value\r\n',
        b'-WRONGTYPE Operation against a key holding the wrong kind of value\r\n',
        b'-WRONGTYPE Operation against a key holding the wrong kind of value\r\n',
        b'-WRONGTYPE Operation against a key holding the wrong kind of value\r\n',
        b'-WRONGTYPE Operation against a key holding the wrong kind of value\r\n',
        b'-WRONGTYPE Operation against a key holding the wrong kind of value\r\n',
        b'-WRONGTYPE Operation against a key holding the wrong kind of value\r\n',
        b':2\r\n',
        b'+zset\r\n',
        b'-ERR could not decode requested zset member\r\n',
        b'-ERR could not decode requested zset member\r\n',
        b'-ERR radius cannot be negative\r\n',
        b'-ERR need numeric radius\r\n',
        b'-ERR need numeric radius\r\n',
        b'-ERR unsupported unit provided. please use M, KM, FT, MI\r\n',
        b'-ERR need numeric radius\r\n',
        b'-ERR value is not a valid float\r\n',
        b'-ERR invalid longitude,latitude pair 15.000000,91.000000\r\n',
        b'-ERR COUNT must be > 0\r\n',
        b'-ERR COUNT must be > 0\r\n',
        b'-ERR value is not an integer or out of range\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR the ANY argument requires COUNT argument\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options\r\n',
        b'-ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR syntax error\r\n',
        b"-ERR wrong number of arguments for 'geosearch' command\r\n",
        b"-ERR wrong number of arguments for 'geosearch' command\r\n",
        b"-ERR wrong number of arguments for 'geosearch' command\r\n",
        b'-ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for GeoSearch\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR height or width cannot be negative\r\n',
        b'-ERR height or width cannot be negative\r\n',
        b'-ERR need numeric width\r\n',
        b'-ERR need numeric height\r\n',
        b'-ERR unsupported unit provided. please use M, KM, FT, MI\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR the ANY argument requires COUNT argument\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR invalid longitude,latitude pair 200.000000,37.000000\r\n',
        b'-ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options\r\n',
        b'-ERR syntax error\r\n',
        b'-ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options\r\n',
        b'-ERR COUNT must be > 0\r\n',
        b"-ERR wrong number of arguments for 'geoadd' command\r\n",
        b"-ERR wrong number of arguments for 'geodist' command\r\n",
        b"-ERR wrong number of arguments for 'geosearch' command\r\n",
        b"-ERR wrong number of arguments for 'geosearchstore' command\r\n",
        b"-ERR wrong number of arguments for 'georadius' command\r\n",
        b"-ERR wrong number of arguments for 'georadiusbymember' command\r\n",
        b"-ERR wrong number of arguments for 'geohash' command\r\n",
        b"-ERR wrong number of arguments for 'geopos' command\r\n",
    ],
    'missing_key': [
        b'+OK\r\n',
        b'*0\r\n',
        b'*0\r\n',
        b'-ERR radius cannot be negative\r\n',
        b"-ERR wrong number of arguments for 'geosearch' command\r\n",
        b'*0\r\n',
        b'*0\r\n',
        b'-ERR COUNT must be > 0\r\n',
        b'*0\r\n',
        b'-ERR radius cannot be negative\r\n',
        b':0\r\n',
        b':0\r\n',
        b'+OK\r\n',
        b':0\r\n',
        b':0\r\n',
        b'+OK\r\n',
        b':0\r\n',
        b':0\r\n',
        b':0\r\n',
    ],
    'resp3': [
        b':2\r\n',
        b'*2\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n_\r\n',
        b'*1\r\n_\r\n',
        b'*2\r\n$11\r\nsqdtr74hyu0\r\n_\r\n',
        b'$11\r\n166274.1516\r\n',
        b'_\r\n',
        b'_\r\n',
        b'*2\r\n*4\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n:3479447370796909\r\n*2\r\n,15.08726745843887329\r\n,37.50266842333162032\r\n*4\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n:3479099956230698\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n',
        b'*2\r\n*2\r\n$7\r\nPalermo\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n*2\r\n$7\r\nCatania\r\n*2\r\n,15.08726745843887329\r\n,37.50266842333162032\r\n',
        b'*1\r\n$7\r\nCatania\r\n',
        b':2\r\n',
        b'*2\r\n*2\r\n$7\r\nCatania\r\n,0\r\n*2\r\n$7\r\nPalermo\r\n,166.27415156960032\r\n',
    ],
    'listpack_set': [
        b':120\r\n',
        b'$8\r\nlistpack\r\n',
        b'*0\r\n',
        b'*0\r\n',
        b'*0\r\n',
        b'*1\r\n$2\r\np3\r\n',
        b'*0\r\n',
        b'*0\r\n',
        b'*0\r\n',
        b'*1\r\n$2\r\np3\r\n',
        b'*6\r\n$3\r\np31\r\n$4\r\np116\r\n$3\r\np65\r\n$2\r\np5\r\n$3\r\np85\r\n$3\r\np45\r\n',
        b'*6\r\n*2\r\n$3\r\np85\r\n$7\r\n38.3685\r\n*2\r\n$3\r\np45\r\n$7\r\n45.1781\r\n*2\r\n$3\r\np65\r\n$7\r\n46.0035\r\n*2\r\n$4\r\np116\r\n$7\r\n48.8347\r\n*2\r\n$3\r\np31\r\n$7\r\n68.4485\r\n*2\r\n$2\r\np5\r\n$7\r\n71.3349\r\n',
        b'*2\r\n*2\r\n$4\r\np116\r\n:3662445095109666\r\n*2\r\n$3\r\np85\r\n:3663195662293650\r\n',
        b'*4\r\n$3\r\np57\r\n$4\r\np104\r\n$2\r\np3\r\n$3\r\np32\r\n',
        b'*85\r\n$3\r\np37\r\n$3\r\np35\r\n$3\r\np19\r\n$3\r\np66\r\n$3\r\np79\r\n$3\r\np34\r\n$4\r\np105\r\n$3\r\np49\r\n$3\r\np82\r\n$3\r\np62\r\n$3\r\np87\r\n$3\r\np58\r\n$3\r\np81\r\n$4\r\np109\r\n$3\r\np63\r\n$3\r\np94\r\n$3\r\np64\r\n$3\r\np90\r\n$4\r\np111\r\n$3\r\np11\r\n$3\r\np57\r\n$4\r\np104\r\n$2\r\np3\r\n$3\r\np32\r\n$3\r\np72\r\n$3\r\np77\r\n$3\r\np60\r\n$3\r\np76\r\n$3\r\np31\r\n$4\r\np116\r\n$3\r\np65\r\n$3\r\np28\r\n$2\r\np6\r\n$3\r\np74\r\n$4\r\np100\r\n$3\r\np14\r\n$4\r\np113\r\n$4\r\np119\r\n$4\r\np106\r\n$3\r\np16\r\n$3\r\np80\r\n$3\r\np36\r\n$2\r\np5\r\n$3\r\np91\r\n$3\r\np59\r\n$3\r\np99\r\n$3\r\np85\r\n$3\r\np45\r\n$3\r\np52\r\n$3\r\np54\r\n$3\r\np83\r\n$3\r\np29\r\n$3\r\np21\r\n$3\r\np46\r\n$4\r\np114\r\n$3\r\np50\r\n$2\r\np0\r\n$3\r\np23\r\n$3\r\np41\r\n$4\r\np118\r\n$3\r\np86\r\n$3\r\np24\r\n$4\r\np110\r\n$3\r\np26\r\n$3\r\np69\r\n$4\r\np107\r\n$2\r\np1\r\n$3\r\np17\r\n$3\r\np61\r\n$3\r\np88\r\n$3\r\np44\r\n$3\r\np75\r\n$3\r\np55\r\n$3\r\np10\r\n$4\r\np112\r\n$3\r\np38\r\n$3\r\np30\r\n$3\r\np96\r\n$4\r\np117\r\n$3\r\np43\r\n$3\r\np71\r\n$3\r\np42\r\n$3\r\np78\r\n$3\r\np12\r\n$3\r\np73\r\n',
        b'*7\r\n*2\r\n$3\r\np85\r\n$7\r\n38.3685\r\n*2\r\n$3\r\np45\r\n$7\r\n45.1781\r\n*2\r\n$3\r\np65\r\n$7\r\n46.0035\r\n*2\r\n$4\r\np116\r\n$7\r\n48.8347\r\n*2\r\n$3\r\np31\r\n$7\r\n68.4485\r\n*2\r\n$2\r\np5\r\n$7\r\n71.3349\r\n*2\r\n$3\r\np60\r\n$7\r\n80.2359\r\n',
        b'*5\r\n*2\r\n$3\r\np25\r\n:3474308843105839\r\n*2\r\n$3\r\np86\r\n:3667981088956585\r\n*2\r\n$4\r\np118\r\n:3663567867622415\r\n*2\r\n$3\r\np87\r\n:3661927661378851\r\n*2\r\n$2\r\np0\r\n:3663526334582436\r\n',
        b'*4\r\n$3\r\np93\r\n$4\r\np101\r\n$3\r\np39\r\n$3\r\np89\r\n',
        b'*120\r\n$3\r\np93\r\n$4\r\np101\r\n$3\r\np39\r\n$3\r\np89\r\n$3\r\np20\r\n$3\r\np48\r\n$2\r\np2\r\n$3\r\np15\r\n$3\r\np37\r\n$3\r\np35\r\n$3\r\np53\r\n$3\r\np19\r\n$3\r\np66\r\n$3\r\np79\r\n$3\r\np34\r\n$4\r\np105\r\n$3\r\np49\r\n$3\r\np82\r\n$3\r\np62\r\n$3\r\np87\r\n$3\r\np58\r\n$3\r\np81\r\n$4\r\np109\r\n$3\r\np63\r\n$3\r\np94\r\n$3\r\np64\r\n$3\r\np90\r\n$4\r\np111\r\n$3\r\np11\r\n$3\r\np57\r\n$4\r\np104\r\n$2\r\np3\r\n$3\r\np32\r\n$3\r\np72\r\n$3\r\np77\r\n$3\r\np60\r\n$3\r\np76\r\n$3\r\np31\r\n$4\r\np116\r\n$3\r\np65\r\n$3\r\np28\r\n$3\r\np95\r\n$2\r\np6\r\n$3\r\np74\r\n$4\r\np100\r\n$3\r\np14\r\n$4\r\np113\r\n$4\r\np119\r\n$4\r\np106\r\n$3\r\np13\r\n$4\r\np102\r\n$2\r\np9\r\n$3\r\np16\r\n$4\r\np115\r\n$3\r\np80\r\n$3\r\np36\r\n$2\r\np5\r\n$3\r\np91\r\n$3\r\np59\r\n$3\r\np99\r\n$3\r\np85\r\n$3\r\np45\r\n$3\r\np52\r\n$3\r\np54\r\n$3\r\np83\r\n$3\r\np29\r\n$3\r\np21\r\n$3\r\np46\r\n$4\r\np114\r\n$3\r\np50\r\n$2\r\np0\r\n$3\r\np23\r\n$3\r\np41\r\n$4\r\np118\r\n$3\r\np92\r\n$3\r\np68\r\n$3\r\np86\r\n$3\r\np24\r\n$4\r\np110\r\n$3\r\np26\r\n$3\r\np69\r\n$3\r\np70\r\n$2\r\np8\r\n$3\r\np98\r\n$3\r\np97\r\n$4\r\np107\r\n$2\r\np1\r\n$3\r\np67\r\n$3\r\np17\r\n$3\r\np61\r\n$3\r\np88\r\n$3\r\np44\r\n$3\r\np75\r\n$3\r\np55\r\n$3\r\np10\r\n$4\r\np112\r\n$3\r\np38\r\n$3\r\np30\r\n$3\r\np96\r\n$4\r\np117\r\n$3\r\np43\r\n$3\r\np71\r\n$3\r\np22\r\n$3\r\np42\r\n$2\r\np4\r\n$3\r\np78\r\n$3\r\np12\r\n$3\r\np73\r\n$3\r\np47\r\n$4\r\np103\r\n$3\r\np84\r\n$4\r\np108\r\n$3\r\np40\r\n$3\r\np51\r\n$2\r\np7\r\n$3\r\np33\r\n$3\r\np18\r\n$3\r\np25\r\n$3\r\np27\r\n$3\r\np56\r\n',
        b'*7\r\n*2\r\n$3\r\np85\r\n$7\r\n38.3685\r\n*2\r\n$3\r\np45\r\n$7\r\n45.1781\r\n*2\r\n$3\r\np65\r\n$7\r\n46.0035\r\n*2\r\n$4\r\np116\r\n$7\r\n48.8347\r\n*2\r\n$3\r\np31\r\n$7\r\n68.4485\r\n*2\r\n$2\r\np5\r\n$7\r\n71.3349\r\n*2\r\n$3\r\np60\r\n$7\r\n80.2359\r\n',
        b'*5\r\n*2\r\n$3\r\np40\r\n:3473755720909667\r\n*2\r\n$3\r\np92\r\n:3665810315811729\r\n*2\r\n$4\r\np101\r\n:3661409155531867\r\n*2\r\n$3\r\np39\r\n:3661410315209408\r\n*2\r\n$4\r\np102\r\n:3662845300512033\r\n',
        b'*4\r\n$3\r\np93\r\n$4\r\np101\r\n$3\r\np39\r\n$3\r\np89\r\n',
        b'*120\r\n$3\r\np40\r\n$3\r\np51\r\n$2\r\np7\r\n$3\r\np33\r\n$3\r\np18\r\n$3\r\np25\r\n$3\r\np27\r\n$3\r\np56\r\n$3\r\np93\r\n$4\r\np101\r\n$3\r\np39\r\n$3\r\np89\r\n$3\r\np20\r\n$3\r\np48\r\n$2\r\np2\r\n$3\r\np15\r\n$3\r\np37\r\n$3\r\np35\r\n$3\r\np53\r\n$3\r\np19\r\n$3\r\np66\r\n$3\r\np79\r\n$3\r\np34\r\n$4\r\np105\r\n$3\r\np49\r\n$3\r\np82\r\n$3\r\np62\r\n$3\r\np87\r\n$3\r\np58\r\n$3\r\np81\r\n$4\r\np109\r\n$3\r\np63\r\n$3\r\np94\r\n$3\r\np64\r\n$3\r\np90\r\n$4\r\np111\r\n$3\r\np11\r\n$3\r\np57\r\n$4\r\np104\r\n$2\r\np3\r\n$3\r\np32\r\n$3\r\np72\r\n$3\r\np77\r\n$3\r\np60\r\n$3\r\np76\r\n$3\r\np31\r\n$4\r\np116\r\n$3\r\np65\r\n$3\r\np28\r\n$3\r\np95\r\n$2\r\np6\r\n$3\r\np74\r\n$4\r\np100\r\n$3\r\np14\r\n$4\r\np113\r\n$4\r\np119\r\n$4\r\np106\r\n$3\r\np13\r\n$4\r\np102\r\n$2\r\np9\r\n$3\r\np16\r\n$4\r\np115\r\n$3\r\np80\r\n$3\r\np36\r\n$2\r\np5\r\n$3\r\np91\r\n$3\r\np59\r\n$3\r\np99\r\n$3\r\np85\r\n$3\r\np45\r\n$3\r\np52\r\n$3\r\np54\r\n$3\r\np83\r\n$3\r\np29\r\n$3\r\np21\r\n$3\r\np46\r\n$4\r\np114\r\n$3\r\np50\r\n$2\r\np0\r\n$3\r\np23\r\n$3\r\np41\r\n$4\r\np118\r\n$3\r\np92\r\n$3\r\np68\r\n$3\r\np86\r\n$3\r\np24\r\n$4\r\np110\r\n$3\r\np26\r\n$3\r\np69\r\n$3\r\np70\r\n$2\r\np8\r\n$3\r\np98\r\n$3\r\np97\r\n$4\r\np107\r\n$2\r\np1\r\n$3\r\np67\r\n$3\r\np17\r\n$3\r\np61\r\n$3\r\np88\r\n$3\r\np44\r\n$3\r\np75\r\n$3\r\np55\r\n$3\r\np10\r\n$4\r\np112\r\n$3\r\np38\r\n$3\r\np30\r\n$3\r\np96\r\n$4\r\np117\r\n$3\r\np43\r\n$3\r\np71\r\n$3\r\np22\r\n$3\r\np42\r\n$2\r\np4\r\n$3\r\np78\r\n$3\r\np12\r\n$3\r\np73\r\n$3\r\np47\r\n$4\r\np103\r\n$3\r\np84\r\n$4\r\np108\r\n',
        b'*7\r\n*2\r\n$3\r\np85\r\n$7\r\n38.3685\r\n*2\r\n$3\r\np45\r\n$7\r\n45.1781\r\n*2\r\n$3\r\np65\r\n$7\r\n46.0035\r\n*2\r\n$4\r\np116\r\n$7\r\n48.8347\r\n*2\r\n$3\r\np31\r\n$7\r\n68.4485\r\n*2\r\n$2\r\np5\r\n$7\r\n71.3349\r\n*2\r\n$3\r\np60\r\n$7\r\n80.2359\r\n',
        b'*5\r\n*2\r\n$3\r\np40\r\n:3473755720909667\r\n*2\r\n$3\r\np92\r\n:3665810315811729\r\n*2\r\n$4\r\np101\r\n:3661409155531867\r\n*2\r\n$3\r\np39\r\n:3661410315209408\r\n*2\r\n$4\r\np102\r\n:3662845300512033\r\n',
        b'*4\r\n$3\r\np40\r\n$3\r\np51\r\n$2\r\np7\r\n$3\r\np33\r\n',
        b'*10\r\n*2\r\n$3\r\np35\r\n$8\r\n230.2629\r\n*2\r\n$3\r\np37\r\n$8\r\n248.8198\r\n*2\r\n$3\r\np66\r\n$8\r\n280.1493\r\n*2\r\n$3\r\np19\r\n$8\r\n296.8788\r\n*2\r\n$3\r\np15\r\n$8\r\n301.6102\r\n*2\r\n$2\r\np2\r\n$8\r\n301.8906\r\n*2\r\n$3\r\np48\r\n$8\r\n302.7974\r\n*2\r\n$3\r\np53\r\n$8\r\n307.4131\r\n*2\r\n$3\r\np20\r\n$8\r\n348.8253\r\n*2\r\n$3\r\np89\r\n$8\r\n379.9959\r\n',
        b':85\r\n',
        b'*170\r\n$3\r\np85\r\n$17\r\n38.36850609075421\r\n$3\r\np45\r\n$16\r\n45.1780902994043\r\n$3\r\np65\r\n$17\r\n46.00348303218767\r\n$4\r\np116\r\n$17\r\n48.83473808286951\r\n$3\r\np31\r\n$17\r\n68.44850823129465\r\n$2\r\np5\r\n$17\r\n71.33491950990543\r\n$3\r\np60\r\n$17\r\n80.23592705756614\r\n$3\r\np72\r\n$17\r\n86.33861966863904\r\n$3\r\np77\r\n$16\r\n96.9512387190231\r\n$3\r\np59\r\n$17\r\n100.0739940884668\r\n$3\r\np99\r\n$18\r\n112.68130539260474\r\n$3\r\np32\r\n$17\r\n114.8673605676138\r\n$3\r\np96\r\n$18\r\n122.07343955546021\r\n$3\r\np76\r\n$18\r\n122.92138661234208\r\n$3\r\np36\r\n$17\r\n145.6030272275814\r\n$2\r\np3\r\n$18\r\n151.22578743551128\r\n$3\r\np14\r\n$18\r\n152.95712053286942\r\n$3\r\np82\r\n$17\r\n153.7276882310793\r\n$4\r\np119\r\n$18\r\n157.21703533366596\r\n$3\r\np91\r\n$18\r\n158.51774518795526\r\n$3\r\np62\r\n$18\r\n160.08585017246156\r\n$3\r\np17\r\n$18\r\n160.85147115884604\r\n$4\r\np104\r\n$18\r\n168.58218865581333\r\n$3\r\np88\r\n$18\r\n170.45330575493085\r\n$4\r\np113\r\n$18\r\n172.69243550627098\r\n$3\r\np57\r\n$17\r\n173.0484325325986\r\n$4\r\np105\r\n$18\r\n173.08689284026386\r\n$3\r\np29\r\n$18\r\n173.33583027100147\r\n$4\r\np117\r\n$17\r\n176.3807596613472\r\n$3\r\np43\r\n$18\r\n176.68821102674687\r\n$4\r\np100\r\n$17\r\n176.8086439128409\r\n$3\r\np21\r\n$18\r\n180.63340342445716\r\n$3\r\np83\r\n$18\r\n187.31210486685856\r\n$3\r\np74\r\n$17\r\n206.2389160210519\r\n$3\r\np90\r\n$16\r\n206.800254487793\r\n$3\r\np46\r\n$18\r\n210.47223056327272\r\n$3\r\np61\r\n$17\r\n210.7993720156532\r\n$4\r\np111\r\n$18\r\n211.07913577169856\r\n$3\r\np11\r\n$17\r\n211.4727220703533\r\n$3\r\np26\r\n$18\r\n214.11378285438283\r\n$3\r\np54\r\n$18\r\n215.98504720949703\r\n$3\r\np75\r\n$18\r\n216.44427471860786\r\n$4\r\np112\r\n$18\r\n217.76921985742518\r\n$3\r\np16\r\n$18\r\n218.36866213567572\r\n$3\r\np38\r\n$18\r\n220.07811768678246\r\n$2\r\np6\r\n$18\r\n221.31459195209024\r\n$3\r\np44\r\n$18\r\n221.89302368808626\r\n$3\r\np49\r\n$18\r\n223.08840879212576\r\n$3\r\np64\r\n$18\r\n223.75738473602644\r\n$3\r\np52\r\n$18\r\n227.64980768591656\r\n$3\r\np35\r\n$18\r\n230.26287613450592\r\n$4\r\np106\r\n$18\r\n231.76932201232393\r\n$3\r\np78\r\n$18\r\n236.43237763876007\r\n$4\r\np114\r\n$17\r\n240.7027353936466\r\n$3\r\np30\r\n$18\r\n245.35739694024875\r\n$3\r\np37\r\n$17\r\n248.8197768607991\r\n$3\r\np71\r\n$16\r\n251.691826940322\r\n$3\r\np12\r\n$18\r\n254.48569737357695\r\n$3\r\np63\r\n$18\r\n254.91552135391527\r\n$4\r\np107\r\n$17\r\n257.4616720223163\r\n$3\r\np50\r\n$17\r\n257.9394039714142\r\n$3\r\np94\r\n$17\r\n263.0600304598078\r\n$3\r\np69\r\n$18\r\n268.23805333102723\r\n$3\r\np23\r\n$18\r\n269.91627180987666\r\n$3\r\np73\r\n$17\r\n270.6188763788132\r\n$3\r\np41\r\n$17\r\n272.4143259623007\r\n$3\r\np34\r\n$18\r\n275.80213995186017\r\n$3\r\np80\r\n$18\r\n278.03862306676467\r\n$4\r\np110\r\n$18\r\n279.74617319130203\r\n$3\r\np66\r\n$18\r\n280.14933105720286\r\n$3\r\np81\r\n$18\r\n281.08404891191543\r\n$3\r\np55\r\n$17\r\n284.5241493363178\r\n$3\r\np24\r\n$17\r\n284.5587210457234\r\n$4\r\np109\r\n$18\r\n286.48650347316664\r\n$3\r\np79\r\n$17\r\n287.4541754741063\r\n$3\r\np42\r\n$18\r\n289.06507667896284\r\n$3\r\np58\r\n$17\r\n291.2536524227357\r\n$2\r\np1\r\n$17\r\n292.2161840156539\r\n$2\r\np0\r\n$18\r\n293.61296489818227\r\n$3\r\np10\r\n$17\r\n294.0314874457424\r\n$3\r\np87\r\n$17\r\n294.2088004413413\r\n$4\r\np118\r\n$18\r\n294.89699960653394\r\n$3\r\np28\r\n$17\r\n296.8071489539598\r\n$3\r\np19\r\n$18\r\n296.87884438739854\r\n$3\r\np86\r\n$17\r\n298.1711268030775\r\n',
        b'$8\r\nlistpack\r\n',
    ],
    'skiplist_set': [
        b':600\r\n',
        b'$8\r\nskiplist\r\n',
        b'*0\r\n',
        b'*0\r\n',
        b'*0\r\n',
        b'*1\r\n$2\r\np9\r\n',
        b'*0\r\n',
        b'*0\r\n',
        b'*0\r\n',
        b'*1\r\n$2\r\np9\r\n',
        b'*1\r\n$4\r\np330\r\n',
        b'*1\r\n*2\r\n$4\r\np330\r\n$7\r\n56.2450\r\n',
        b'*1\r\n*2\r\n$4\r\np330\r\n:3662314879038386\r\n',
        b'*1\r\n$2\r\np9\r\n',
        b'*23\r\n$4\r\np351\r\n$4\r\np123\r\n$3\r\np46\r\n$4\r\np465\r\n$4\r\np330\r\n$4\r\np332\r\n$4\r\np206\r\n$4\r\np280\r\n$4\r\np162\r\n$4\r\np289\r\n$4\r\np137\r\n$4\r\np598\r\n$4\r\np318\r\n$4\r\np408\r\n$4\r\np485\r\n$4\r\np345\r\n$4\r\np285\r\n$4\r\np475\r\n$3\r\np24\r\n$4\r\np295\r\n$4\r\np490\r\n$2\r\np8\r\n$4\r\np250\r\n',
        b'*7\r\n*2\r\n$4\r\np330\r\n$7\r\n56.2450\r\n*2\r\n$4\r\np465\r\n$7\r\n97.1516\r\n*2\r\n$3\r\np46\r\n$8\r\n103.9242\r\n*2\r\n$4\r\np280\r\n$8\r\n121.9025\r\n*2\r\n$4\r\np289\r\n$8\r\n128.9744\r\n*2\r\n$4\r\np351\r\n$8\r\n131.5671\r\n*2\r\n$4\r\np295\r\n$8\r\n142.3714\r\n',
        b'*5\r\n*2\r\n$4\r\np134\r\n:3669347406103402\r\n*2\r\n$4\r\np408\r\n:3474338513172847\r\n*2\r\n$4\r\np206\r\n:3662744481869400\r\n*2\r\n$4\r\np485\r\n:3474398447588684\r\n*2\r\n$4\r\np162\r\n:3663141266136001\r\n',
        b'*4\r\n$4\r\np349\r\n$3\r\np39\r\n$4\r\np383\r\n$4\r\np594\r\n',
        b'*428\r\n$4\r\np420\r\n$4\r\np238\r\n$4\r\np225\r\n$4\r\np160\r\n$4\r\np159\r\n$4\r\np219\r\n$4\r\np302\r\n$4\r\np228\r\n$4\r\np360\r\n$4\r\np510\r\n$4\r\np157\r\n$4\r\np369\r\n$4\r\np351\r\n$4\r\np344\r\n$4\r\np123\r\n$3\r\np46\r\n$4\r\np465\r\n$4\r\np330\r\n$4\r\np332\r\n$4\r\np206\r\n$4\r\np280\r\n$4\r\np162\r\n$4\r\np289\r\n$4\r\np137\r\n$4\r\np374\r\n$4\r\np121\r\n$4\r\np508\r\n$4\r\np224\r\n$3\r\np77\r\n$4\r\np596\r\n$4\r\np367\r\n$4\r\np576\r\n$4\r\np507\r\n$3\r\np95\r\n$4\r\np590\r\n$4\r\np379\r\n$4\r\np126\r\n$4\r\np448\r\n$4\r\np124\r\n$4\r\np397\r\n$4\r\np466\r\n$4\r\np414\r\n$4\r\np396\r\n$4\r\np317\r\n$4\r\np433\r\n$2\r\np4\r\n$4\r\np197\r\n$3\r\np64\r\n$4\r\np308\r\n$4\r\np281\r\n$4\r\np248\r\n$4\r\np109\r\n$4\r\np449\r\n$3\r\np98\r\n$4\r\np345\r\n$4\r\np285\r\n$4\r\np475\r\n$3\r\np24\r\n$4\r\np295\r\n$4\r\np136\r\n$4\r\np537\r\n$4\r\np495\r\n$4\r\np505\r\n$4\r\np490\r\n$2\r\np8\r\n$4\r\np250\r\n$4\r\np134\r\n$4\r\np139\r\n$4\r\np454\r\n$4\r\np199\r\n$4\r\np153\r\n$3\r\np20\r\n$4\r\np409\r\n$4\r\np514\r\n$4\r\np564\r\n$4\r\np373\r\n$4\r\np174\r\n$4\r\np546\r\n$4\r\np142\r\n$4\r\np429\r\n$4\r\np305\r\n$4\r\np222\r\n$4\r\np424\r\n$4\r\np377\r\n$4\r\np493\r\n$4\r\np282\r\n$3\r\np58\r\n$4\r\np270\r\n$4\r\np165\r\n$4\r\np566\r\n$4\r\np442\r\n$4\r\np591\r\n$4\r\np484\r\n$4\r\np570\r\n$3\r\np52\r\n$4\r\np151\r\n$4\r\np558\r\n$3\r\np34\r\n$4\r\np534\r\n$4\r\np346\r\n$3\r\np84\r\n$4\r\np535\r\n$4\r\np221\r\n$4\r\np381\r\n$4\r\np434\r\n$4\r\np573\r\n$4\r\np415\r\n$4\r\np252\r\n$4\r\np211\r\n$4\r\np209\r\n$4\r\np120\r\n$3\r\np82\r\n$4\r\np568\r\n$4\r\np352\r\n$4\r\np326\r\n$4\r\np122\r\n$4\r\np278\r\n$4\r\np394\r\n$4\r\np110\r\n$4\r\np269\r\n$3\r\np97\r\n$4\r\np190\r\n$4\r\np412\r\n$4\r\np254\r\n$4\r\np235\r\n$3\r\np70\r\n$3\r\np21\r\n$4\r\np530\r\n$4\r\np511\r\n$3\r\np65\r\n$4\r\np149\r\n$4\r\np130\r\n$4\r\np599\r\n$4\r\np279\r\n$4\r\np310\r\n$4\r\np194\r\n$3\r\np27\r\n$4\r\np459\r\n$4\r\np113\r\n$4\r\np333\r\n$4\r\np430\r\n$4\r\np376\r\n$4\r\np297\r\n$4\r\np550\r\n$4\r\np399\r\n$3\r\np66\r\n$4\r\np253\r\n$4\r\np255\r\n$4\r\np453\r\n$4\r\np432\r\n$3\r\np86\r\n$4\r\np336\r\n$4\r\np158\r\n$4\r\np589\r\n$4\r\np181\r\n$3\r\np69\r\n$4\r\np528\r\n$3\r\np67\r\n$4\r\np323\r\n$4\r\np574\r\n$4\r\np251\r\n$4\r\np312\r\n$4\r\np549\r\n$4\r\np339\r\n$4\r\np431\r\n$3\r\np90\r\n$4\r\np364\r\n$4\r\np456\r\n$4\r\np553\r\n$4\r\np128\r\n$4\r\np533\r\n$4\r\np276\r\n$3\r\np85\r\n$4\r\np370\r\n$4\r\np188\r\n$4\r\np185\r\n$4\r\np544\r\n$4\r\np348\r\n$4\r\np371\r\n$4\r\np243\r\n$4\r\np437\r\n$4\r\np244\r\n$4\r\np386\r\n$4\r\np257\r\n$4\r\np186\r\n$4\r\np522\r\n$4\r\np155\r\n$4\r\np329\r\n$4\r\np474\r\n$3\r\np18\r\n$2\r\np0\r\n$4\r\np372\r\n$4\r\np422\r\n$4\r\np148\r\n$4\r\np481\r\n$4\r\np166\r\n$4\r\np245\r\n$4\r\np138\r\n$4\r\np554\r\n$4\r\np356\r\n$4\r\np384\r\n$4\r\np389\r\n$4\r\np542\r\n$4\r\np413\r\n$4\r\np263\r\n$3\r\np28\r\n$4\r\np274\r\n$4\r\np498\r\n$4\r\np359\r\n$4\r\np441\r\n$3\r\np14\r\n$4\r\np299\r\n$3\r\np62\r\n$3\r\np50\r\n$4\r\np407\r\n$3\r\np53\r\n$3\r\np73\r\n$3\r\np72\r\n$4\r\np464\r\n$4\r\np402\r\n$4\r\np593\r\n$4\r\np363\r\n$4\r\np502\r\n$4\r\np496\r\n$4\r\np117\r\n$2\r\np3\r\n$4\r\np416\r\n$4\r\np247\r\n$4\r\np196\r\n$4\r\np559\r\n$3\r\np83\r\n$4\r\np400\r\n$3\r\np12\r\n$4\r\np335\r\n$4\r\np294\r\n$4\r\np579\r\n$4\r\np264\r\n$4\r\np217\r\n$4\r\np205\r\n$4\r\np368\r\n$3\r\np57\r\n$4\r\np531\r\n$4\r\np127\r\n$4\r\np261\r\n$4\r\np458\r\n$4\r\np175\r\n$4\r\np268\r\n$4\r\np468\r\n$3\r\np26\r\n$4\r\np172\r\n$4\r\np313\r\n$4\r\np388\r\n$4\r\np536\r\n$4\r\np132\r\n$4\r\np446\r\n$3\r\np35\r\n$4\r\np169\r\n$3\r\np87\r\n$4\r\np180\r\n$4\r\np218\r\n$4\r\np598\r\n$4\r\np275\r\n$4\r\np472\r\n$4\r\np215\r\n$3\r\np40\r\n$3\r\np92\r\n$4\r\np214\r\n$4\r\np469\r\n$4\r\np318\r\n$4\r\np408\r\n$4\r\np485\r\n$4\r\np306\r\n$4\r\np392\r\n$4\r\np525\r\n$4\r\np315\r\n$4\r\np382\r\n$4\r\np477\r\n$4\r\np298\r\n$4\r\np538\r\n$4\r\np521\r\n$4\r\np291\r\n$4\r\np516\r\n$3\r\np54\r\n$4\r\np349\r\n$3\r\np39\r\n$4\r\np383\r\n$4\r\np594\r\n$2\r\np9\r\n$4\r\np395\r\n$4\r\np548\r\n$4\r\np307\r\n$4\r\np592\r\n$4\r\np545\r\n$4\r\np587\r\n$4\r\np184\r\n$4\r\np582\r\n$4\r\np597\r\n$2\r\np7\r\n$4\r\np195\r\n$4\r\np569\r\n$4\r\np239\r\n$4\r\np457\r\n$4\r\np309\r\n$4\r\np300\r\n$4\r\np189\r\n$3\r\np74\r\n$4\r\np375\r\n$4\r\np331\r\n$4\r\np171\r\n$4\r\np145\r\n$3\r\np10\r\n$3\r\np13\r\n$3\r\np63\r\n$4\r\np266\r\n$4\r\np284\r\n$4\r\np179\r\n$3\r\np55\r\n$4\r\np259\r\n$4\r\np417\r\n$3\r\np42\r\n$3\r\np29\r\n$4\r\np480\r\n$4\r\np240\r\n$4\r\np340\r\n$4\r\np447\r\n$3\r\np80\r\n$4\r\np322\r\n$4\r\np439\r\n$4\r\np112\r\n$4\r\np327\r\n$4\r\np577\r\n$4\r\np320\r\n$4\r\np283\r\n$3\r\np56\r\n$4\r\np135\r\n$4\r\np362\r\n$4\r\np271\r\n$4\r\np144\r\n$4\r\np192\r\n$3\r\np89\r\n$3\r\np88\r\n$4\r\np401\r\n$4\r\np588\r\n$3\r\np31\r\n$4\r\np562\r\n$4\r\np524\r\n$4\r\np242\r\n$3\r\np17\r\n$4\r\np410\r\n$4\r\np177\r\n$4\r\np455\r\n$2\r\np6\r\n$3\r\np49\r\n$3\r\np15\r\n$4\r\np328\r\n$4\r\np509\r\n$4\r\np482\r\n$4\r\np532\r\n$4\r\np246\r\n$4\r\np198\r\n$4\r\np223\r\n$4\r\np443\r\n$4\r\np419\r\n$4\r\np357\r\n$4\r\np366\r\n$4\r\np164\r\n$4\r\np483\r\n$4\r\np451\r\n$4\r\np506\r\n$3\r\np59\r\n$4\r\np290\r\n$4\r\np358\r\n$4\r\np479\r\n$4\r\np406\r\n$4\r\np341\r\n$4\r\np314\r\n$4\r\np556\r\n$4\r\np116\r\n$4\r\np108\r\n$4\r\np526\r\n$4\r\np115\r\n$3\r\np71\r\n$4\r\np296\r\n$3\r\np99\r\n$4\r\np201\r\n$4\r\np125\r\n$4\r\np515\r\n$4\r\np118\r\n$4\r\np288\r\n$3\r\np45\r\n$4\r\np191\r\n$4\r\np234\r\n$4\r\np365\r\n$4\r\np311\r\n$4\r\np444\r\n$4\r\np114\r\n$4\r\np565\r\n$3\r\np78\r\n$4\r\np100\r\n$4\r\np513\r\n$4\r\np501\r\n$4\r\np583\r\n$4\r\np167\r\n$4\r\np494\r\n$4\r\np361\r\n$4\r\np435\r\n$4\r\np241\r\n$4\r\np426\r\n$4\r\np334\r\n$4\r\np287\r\n$4\r\np450\r\n$4\r\np170\r\n$4\r\np168\r\n$4\r\np262\r\n$4\r\np527\r\n$4\r\np265\r\n$4\r\np111\r\n$4\r\np204\r\n$4\r\np461\r\n$4\r\np404\r\n$3\r\np61\r\n$4\r\np202\r\n$4\r\np378\r\n$4\r\np152\r\n$4\r\np390\r\n$3\r\np51\r\n$4\r\np463\r\n$4\r\np154\r\n',
        b'*7\r\n*2\r\n$4\r\np330\r\n$7\r\n56.2450\r\n*2\r\n$4\r\np465\r\n$7\r\n97.1516\r\n*2\r\n$3\r\np46\r\n$8\r\n103.9242\r\n*2\r\n$4\r\np280\r\n$8\r\n121.9025\r\n*2\r\n$4\r\np289\r\n$8\r\n128.9744\r\n*2\r\n$4\r\np351\r\n$8\r\n131.5671\r\n*2\r\n$4\r\np295\r\n$8\r\n142.3714\r\n',
        b'*5\r\n*2\r\n$4\r\np491\r\n:3463374037015009\r\n*2\r\n$4\r\np518\r\n:2176601216580700\r\n*2\r\n$4\r\np210\r\n:3689494799572437\r\n*2\r\n$4\r\np249\r\n:2176542664199856\r\n*2\r\n$3\r\np22\r\n:3678153938506397\r\n',
        b'*4\r\n$4\r\np143\r\n$4\r\np499\r\n$3\r\np62\r\n$4\r\np207\r\n',
        b'*600\r\n$4\r\np102\r\n$4\r\np143\r\n$4\r\np499\r\n$3\r\np62\r\n$4\r\np207\r\n$3\r\np50\r\n$4\r\np338\r\n$4\r\np580\r\n$4\r\np407\r\n$3\r\np53\r\n$3\r\np73\r\n$4\r\np491\r\n$4\r\np286\r\n$4\r\np380\r\n$4\r\np324\r\n$4\r\np176\r\n$4\r\np541\r\n$4\r\np578\r\n$4\r\np267\r\n$3\r\np72\r\n$4\r\np464\r\n$4\r\np402\r\n$4\r\np593\r\n$4\r\np363\r\n$4\r\np502\r\n$4\r\np496\r\n$4\r\np117\r\n$2\r\np3\r\n$4\r\np416\r\n$4\r\np247\r\n$4\r\np196\r\n$4\r\np559\r\n$3\r\np83\r\n$4\r\np400\r\n$3\r\np12\r\n$4\r\np335\r\n$4\r\np294\r\n$4\r\np579\r\n$4\r\np264\r\n$4\r\np217\r\n$4\r\np205\r\n$4\r\np368\r\n$3\r\np57\r\n$4\r\np531\r\n$4\r\np127\r\n$4\r\np261\r\n$4\r\np458\r\n$4\r\np175\r\n$4\r\np268\r\n$4\r\np468\r\n$3\r\np26\r\n$4\r\np172\r\n$4\r\np313\r\n$4\r\np388\r\n$4\r\np536\r\n$4\r\np132\r\n$4\r\np446\r\n$3\r\np35\r\n$4\r\np169\r\n$3\r\np87\r\n$4\r\np180\r\n$4\r\np218\r\n$4\r\np598\r\n$4\r\np275\r\n$4\r\np472\r\n$4\r\np215\r\n$3\r\np40\r\n$3\r\np92\r\n$4\r\np214\r\n$4\r\np469\r\n$4\r\np318\r\n$4\r\np408\r\n$4\r\np485\r\n$4\r\np306\r\n$4\r\np392\r\n$4\r\np525\r\n$4\r\np315\r\n$4\r\np382\r\n$4\r\np477\r\n$4\r\np298\r\n$4\r\np538\r\n$4\r\np521\r\n$4\r\np291\r\n$4\r\np516\r\n$3\r\np54\r\n$4\r\np349\r\n$3\r\np39\r\n$4\r\np383\r\n$4\r\np594\r\n$2\r\np9\r\n$4\r\np347\r\n$4\r\np216\r\n$4\r\np395\r\n$4\r\np548\r\n$4\r\np307\r\n$4\r\np592\r\n$4\r\np545\r\n$4\r\np587\r\n$4\r\np184\r\n$4\r\np582\r\n$4\r\np597\r\n$2\r\np7\r\n$4\r\np195\r\n$4\r\np569\r\n$4\r\np239\r\n$4\r\np457\r\n$4\r\np309\r\n$4\r\np300\r\n$4\r\np189\r\n$3\r\np74\r\n$4\r\np375\r\n$4\r\np331\r\n$4\r\np171\r\n$4\r\np145\r\n$3\r\np10\r\n$3\r\np13\r\n$3\r\np63\r\n$4\r\np266\r\n$4\r\np284\r\n$4\r\np179\r\n$3\r\np55\r\n$4\r\np259\r\n$4\r\np417\r\n$3\r\np42\r\n$4\r\np106\r\n$4\r\np425\r\n$4\r\np487\r\n$4\r\np560\r\n$4\r\np319\r\n$4\r\np292\r\n$4\r\np105\r\n$3\r\np36\r\n$4\r\np304\r\n$4\r\np107\r\n$4\r\np321\r\n$4\r\np212\r\n$4\r\np476\r\n$3\r\np96\r\n$3\r\np29\r\n$4\r\np403\r\n$4\r\np445\r\n$4\r\np557\r\n$4\r\np512\r\n$3\r\np16\r\n$4\r\np355\r\n$4\r\np428\r\n$4\r\np350\r\n$4\r\np303\r\n$3\r\np33\r\n$4\r\np480\r\n$4\r\np240\r\n$2\r\np5\r\n$4\r\np340\r\n$4\r\np447\r\n$4\r\np141\r\n$4\r\np523\r\n$3\r\np80\r\n$4\r\np322\r\n$4\r\np439\r\n$4\r\np112\r\n$4\r\np327\r\n$4\r\np577\r\n$4\r\np320\r\n$4\r\np203\r\n$4\r\np543\r\n$3\r\np60\r\n$3\r\np94\r\n$4\r\np220\r\n$4\r\np440\r\n$4\r\np420\r\n$4\r\np238\r\n$4\r\np225\r\n$4\r\np160\r\n$4\r\np159\r\n$4\r\np219\r\n$4\r\np302\r\n$4\r\np228\r\n$4\r\np360\r\n$4\r\np510\r\n$4\r\np157\r\n$4\r\np369\r\n$4\r\np351\r\n$4\r\np344\r\n$4\r\np123\r\n$3\r\np46\r\n$4\r\np465\r\n$4\r\np330\r\n$4\r\np332\r\n$4\r\np206\r\n$4\r\np280\r\n$4\r\np162\r\n$4\r\np289\r\n$4\r\np137\r\n$4\r\np374\r\n$4\r\np121\r\n$4\r\np508\r\n$4\r\np224\r\n$3\r\np77\r\n$4\r\np596\r\n$4\r\np367\r\n$4\r\np576\r\n$4\r\np507\r\n$3\r\np95\r\n$4\r\np590\r\n$4\r\np379\r\n$4\r\np126\r\n$4\r\np448\r\n$4\r\np124\r\n$4\r\np397\r\n$4\r\np466\r\n$4\r\np414\r\n$4\r\np396\r\n$4\r\np317\r\n$4\r\np433\r\n$2\r\np4\r\n$4\r\np197\r\n$3\r\np64\r\n$4\r\np308\r\n$4\r\np281\r\n$4\r\np248\r\n$4\r\np109\r\n$4\r\np449\r\n$3\r\np98\r\n$4\r\np345\r\n$4\r\np285\r\n$4\r\np475\r\n$3\r\np24\r\n$4\r\np295\r\n$4\r\np136\r\n$4\r\np537\r\n$4\r\np495\r\n$4\r\np505\r\n$4\r\np490\r\n$2\r\np8\r\n$4\r\np250\r\n$4\r\np134\r\n$4\r\np139\r\n$4\r\np454\r\n$4\r\np199\r\n$4\r\np153\r\n$3\r\np20\r\n$4\r\np409\r\n$4\r\np514\r\n$4\r\np564\r\n$4\r\np373\r\n$4\r\np174\r\n$4\r\np546\r\n$4\r\np142\r\n$4\r\np429\r\n$4\r\np305\r\n$4\r\np222\r\n$4\r\np424\r\n$4\r\np377\r\n$4\r\np493\r\n$4\r\np282\r\n$3\r\np58\r\n$4\r\np270\r\n$4\r\np165\r\n$4\r\np566\r\n$4\r\np442\r\n$4\r\np591\r\n$4\r\np484\r\n$4\r\np570\r\n$3\r\np52\r\n$4\r\np151\r\n$4\r\np558\r\n$3\r\np34\r\n$4\r\np534\r\n$4\r\np346\r\n$3\r\np84\r\n$4\r\np535\r\n$4\r\np221\r\n$4\r\np381\r\n$4\r\np434\r\n$4\r\np573\r\n$4\r\np415\r\n$4\r\np252\r\n$4\r\np211\r\n$4\r\np209\r\n$4\r\np120\r\n$3\r\np82\r\n$4\r\np568\r\n$4\r\np352\r\n$4\r\np326\r\n$4\r\np122\r\n$4\r\np278\r\n$4\r\np394\r\n$4\r\np110\r\n$4\r\np269\r\n$3\r\np97\r\n$4\r\np190\r\n$4\r\np412\r\n$4\r\np254\r\n$4\r\np235\r\n$3\r\np70\r\n$3\r\np21\r\n$4\r\np530\r\n$4\r\np511\r\n$3\r\np65\r\n$4\r\np149\r\n$4\r\np130\r\n$4\r\np599\r\n$4\r\np279\r\n$4\r\np310\r\n$4\r\np194\r\n$3\r\np27\r\n$4\r\np459\r\n$4\r\np113\r\n$3\r\np22\r\n$4\r\np333\r\n$4\r\np272\r\n$3\r\np44\r\n$4\r\np393\r\n$4\r\np497\r\n$3\r\np11\r\n$4\r\np430\r\n$4\r\np376\r\n$4\r\np297\r\n$4\r\np550\r\n$4\r\np399\r\n$3\r\np66\r\n$4\r\np253\r\n$4\r\np255\r\n$4\r\np453\r\n$4\r\np432\r\n$3\r\np86\r\n$4\r\np336\r\n$4\r\np595\r\n$4\r\np158\r\n$4\r\np589\r\n$4\r\np181\r\n$4\r\np423\r\n$4\r\np182\r\n$4\r\np103\r\n$4\r\np452\r\n$4\r\np567\r\n$4\r\np256\r\n$4\r\np540\r\n$4\r\np101\r\n$4\r\np575\r\n$4\r\np387\r\n$4\r\np260\r\n$3\r\np69\r\n$4\r\np528\r\n$3\r\np67\r\n$4\r\np323\r\n$4\r\np574\r\n$4\r\np251\r\n$4\r\np312\r\n$4\r\np549\r\n$4\r\np339\r\n$4\r\np431\r\n$3\r\np90\r\n$4\r\np364\r\n$4\r\np456\r\n$4\r\np553\r\n$4\r\np236\r\n$4\r\np128\r\n$4\r\np533\r\n$4\r\np276\r\n$3\r\np85\r\n$4\r\np370\r\n$4\r\np188\r\n$4\r\np185\r\n$4\r\np544\r\n$4\r\np348\r\n$4\r\np371\r\n$4\r\np243\r\n$4\r\np210\r\n$3\r\np81\r\n$4\r\np486\r\n$4\r\np572\r\n$4\r\np438\r\n$4\r\np581\r\n$4\r\np437\r\n$4\r\np244\r\n$4\r\np386\r\n$4\r\np257\r\n$4\r\np186\r\n$4\r\np522\r\n$4\r\np155\r\n$4\r\np329\r\n$4\r\np474\r\n$3\r\np18\r\n$2\r\np0\r\n$4\r\np372\r\n$4\r\np422\r\n$4\r\np148\r\n$4\r\np481\r\n$4\r\np473\r\n$4\r\np232\r\n$4\r\np119\r\n$4\r\np504\r\n$4\r\np337\r\n$4\r\np231\r\n$4\r\np166\r\n$4\r\np245\r\n$4\r\np138\r\n$4\r\np554\r\n$4\r\np356\r\n$4\r\np384\r\n$4\r\np389\r\n$4\r\np542\r\n$4\r\np413\r\n$4\r\np263\r\n$3\r\np28\r\n$4\r\np274\r\n$4\r\np498\r\n$4\r\np359\r\n$4\r\np441\r\n$3\r\np14\r\n$4\r\np299\r\n$4\r\np133\r\n$4\r\np140\r\n$4\r\np156\r\n$4\r\np325\r\n$4\r\np173\r\n$4\r\np343\r\n$3\r\np37\r\n$3\r\np75\r\n$4\r\np227\r\n$4\r\np552\r\n$4\r\np418\r\n$4\r\np187\r\n$4\r\np584\r\n$4\r\np233\r\n$2\r\np2\r\n$4\r\np492\r\n$3\r\np32\r\n$4\r\np273\r\n$4\r\np398\r\n$4\r\np342\r\n$4\r\np539\r\n$4\r\np193\r\n$3\r\np93\r\n$4\r\np551\r\n$4\r\np411\r\n$3\r\np76\r\n$4\r\np488\r\n$4\r\np470\r\n$3\r\np47\r\n$4\r\np208\r\n$4\r\np436\r\n$3\r\np68\r\n$4\r\np150\r\n$4\r\np161\r\n$4\r\np353\r\n$4\r\np163\r\n$4\r\np517\r\n$4\r\np230\r\n$4\r\np585\r\n$3\r\np48\r\n$4\r\np147\r\n$4\r\np586\r\n$4\r\np316\r\n$4\r\np129\r\n$4\r\np519\r\n$4\r\np427\r\n$4\r\np489\r\n$4\r\np258\r\n$3\r\np43\r\n$2\r\np1\r\n$3\r\np19\r\n$4\r\np213\r\n$4\r\np354\r\n$4\r\np561\r\n$4\r\np237\r\n$4\r\np503\r\n$4\r\np500\r\n$3\r\np91\r\n$4\r\np296\r\n$3\r\np23\r\n$4\r\np146\r\n$3\r\np99\r\n$4\r\np201\r\n$4\r\np125\r\n$4\r\np515\r\n$4\r\np118\r\n$4\r\np288\r\n$3\r\np45\r\n$4\r\np191\r\n$4\r\np234\r\n$3\r\np79\r\n$4\r\np462\r\n$4\r\np391\r\n$3\r\np25\r\n$4\r\np178\r\n$4\r\np555\r\n$4\r\np421\r\n$4\r\np365\r\n$4\r\np229\r\n$4\r\np311\r\n$4\r\np444\r\n$4\r\np114\r\n$4\r\np565\r\n$3\r\np78\r\n$4\r\np100\r\n$4\r\np513\r\n$4\r\np501\r\n$4\r\np583\r\n$4\r\np167\r\n$4\r\np494\r\n$4\r\np361\r\n$4\r\np435\r\n$4\r\np241\r\n$4\r\np426\r\n$4\r\np334\r\n$4\r\np287\r\n$4\r\np450\r\n$4\r\np170\r\n$4\r\np168\r\n$4\r\np262\r\n$4\r\np527\r\n$4\r\np265\r\n$4\r\np111\r\n$4\r\np204\r\n$4\r\np461\r\n$4\r\np404\r\n$3\r\np61\r\n$4\r\np202\r\n$4\r\np378\r\n$4\r\np152\r\n$4\r\np390\r\n$3\r\np51\r\n$4\r\np463\r\n$4\r\np154\r\n$4\r\np283\r\n$3\r\np41\r\n$3\r\np56\r\n$4\r\np135\r\n$4\r\np362\r\n$4\r\np271\r\n$4\r\np144\r\n$4\r\np192\r\n$3\r\np89\r\n$3\r\np88\r\n$4\r\np401\r\n$4\r\np588\r\n$3\r\np31\r\n$4\r\np562\r\n$4\r\np524\r\n$4\r\np242\r\n$3\r\np17\r\n$4\r\np410\r\n$4\r\np177\r\n$4\r\np455\r\n$2\r\np6\r\n$3\r\np49\r\n$3\r\np15\r\n$4\r\np328\r\n$4\r\np509\r\n$4\r\np482\r\n$4\r\np547\r\n$4\r\np532\r\n$4\r\np246\r\n$4\r\np183\r\n$4\r\np529\r\n$4\r\np198\r\n$4\r\np223\r\n$4\r\np443\r\n$4\r\np460\r\n$4\r\np419\r\n$4\r\np357\r\n$4\r\np366\r\n$4\r\np405\r\n$4\r\np164\r\n$4\r\np483\r\n$4\r\np451\r\n$4\r\np506\r\n$3\r\np59\r\n$4\r\np290\r\n$4\r\np358\r\n$4\r\np479\r\n$4\r\np406\r\n$4\r\np341\r\n$4\r\np314\r\n$4\r\np556\r\n$4\r\np116\r\n$4\r\np108\r\n$3\r\np30\r\n$4\r\np385\r\n$4\r\np301\r\n$4\r\np104\r\n$4\r\np131\r\n$4\r\np526\r\n$4\r\np115\r\n$3\r\np71\r\n$4\r\np563\r\n$4\r\np467\r\n$4\r\np277\r\n$4\r\np249\r\n$4\r\np471\r\n$4\r\np518\r\n$4\r\np478\r\n$4\r\np200\r\n$4\r\np571\r\n$3\r\np38\r\n$4\r\np226\r\n$4\r\np520\r\n$4\r\np293\r\n',
        b'*7\r\n*2\r\n$4\r\np330\r\n$7\r\n56.2450\r\n*2\r\n$4\r\np465\r\n$7\r\n97.1516\r\n*2\r\n$3\r\np46\r\n$8\r\n103.9242\r\n*2\r\n$4\r\np280\r\n$8\r\n121.9025\r\n*2\r\n$4\r\np289\r\n$8\r\n128.9744\r\n*2\r\n$4\r\np351\r\n$8\r\n131.5671\r\n*2\r\n$4\r\np295\r\n$8\r\n142.3714\r\n',
        b'*5\r\n*2\r\n$4\r\np560\r\n:3489574697717292\r\n*2\r\n$3\r\np47\r\n:1949873035639756\r\n*2\r\n$3\r\np36\r\n:3491345211314584\r\n*2\r\n$4\r\np470\r\n:3718679550406148\r\n*2\r\n$4\r\np208\r\n:1950086410110615\r\n',
        b'*4\r\n$4\r\np102\r\n$4\r\np143\r\n$4\r\np499\r\n$3\r\np62\r\n',
        b'*10\r\n*2\r\n$4\r\np330\r\n$7\r\n56.2450\r\n*2\r\n$4\r\np465\r\n$7\r\n97.1516\r\n*2\r\n$3\r\np46\r\n$8\r\n103.9242\r\n*2\r\n$4\r\np351\r\n$8\r\n131.5671\r\n*2\r\n$4\r\np123\r\n$8\r\n145.8500\r\n*2\r\n$4\r\np344\r\n$8\r\n308.4895\r\n*2\r\n$4\r\np369\r\n$8\r\n339.7410\r\n*2\r\n$4\r\np360\r\n$8\r\n344.3630\r\n*2\r\n$4\r\np228\r\n$8\r\n357.6174\r\n*2\r\n$4\r\np225\r\n$8\r\n362.1518\r\n',
        b':23\r\n',
        b'*46\r\n$4\r\np330\r\n$17\r\n56.24499172855166\r\n$4\r\np465\r\n$17\r\n97.15157123444081\r\n$3\r\np46\r\n$17\r\n103.9242113251047\r\n$4\r\np280\r\n$18\r\n121.90252853438744\r\n$4\r\np289\r\n$18\r\n128.97436175181787\r\n$4\r\np351\r\n$18\r\n131.56710217793238\r\n$4\r\np295\r\n$18\r\n142.37138390527986\r\n$4\r\np123\r\n$18\r\n145.85000323738936\r\n$4\r\np137\r\n$18\r\n174.08576959894492\r\n$4\r\np332\r\n$18\r\n184.45418296627767\r\n$4\r\np475\r\n$17\r\n192.4199056202318\r\n$4\r\np318\r\n$18\r\n199.90593712072373\r\n$4\r\np162\r\n$18\r\n204.48297562906308\r\n$4\r\np345\r\n$18\r\n226.07081773806667\r\n$4\r\np285\r\n$17\r\n250.1934213999206\r\n$4\r\np490\r\n$18\r\n253.01403095362397\r\n$4\r\np485\r\n$18\r\n255.67874787509808\r\n$4\r\np598\r\n$18\r\n260.95250496300025\r\n$4\r\np206\r\n$16\r\n262.545352208056\r\n$3\r\np24\r\n$17\r\n284.4297264397053\r\n$4\r\np408\r\n$17\r\n285.5021551452682\r\n$2\r\np8\r\n$16\r\n290.356971246443\r\n$4\r\np250\r\n$18\r\n290.91992495846307\r\n',
        b'$8\r\nlistpack\r\n',
        b'*3\r\n$11\r\nu83wz227vz0\r\n$11\r\ney7hsjgp590\r\n$11\r\nud4gu069ws0\r\n',
        b'*2\r\n*2\r\n$20\r\n24.92857128381729126\r\n$20\r\n47.59482801083616721\r\n*2\r\n$18\r\n1.9299808144569397\r\n$20\r\n54.14721654794880124\r\n',
    ],
    'pole': [
        b':150\r\n',
        b'*0\r\n',
        b'*0\r\n',
        b'*0\r\n',
        b'*1\r\n$2\r\np5\r\n',
        b'*0\r\n',
        b'*0\r\n',
        b'*0\r\n',
        b'*1\r\n$2\r\np5\r\n',
        b'*1\r\n$3\r\np89\r\n',
        b'*1\r\n*2\r\n$3\r\np89\r\n$7\r\n60.5065\r\n',
        b'*0\r\n',
        b'*1\r\n$2\r\np5\r\n',
        b'*12\r\n$4\r\np117\r\n$3\r\np39\r\n$4\r\np116\r\n$2\r\np9\r\n$3\r\np89\r\n$3\r\np13\r\n$3\r\np30\r\n$2\r\np0\r\n$4\r\np124\r\n$4\r\np148\r\n$2\r\np6\r\n$4\r\np137\r\n',
        b'*7\r\n*2\r\n$3\r\np89\r\n$7\r\n60.5065\r\n*2\r\n$4\r\np124\r\n$7\r\n92.4817\r\n*2\r\n$2\r\np9\r\n$7\r\n96.0281\r\n*2\r\n$3\r\np13\r\n$8\r\n170.3685\r\n*2\r\n$2\r\np6\r\n$8\r\n183.9746\r\n*2\r\n$3\r\np39\r\n$8\r\n202.7017\r\n*2\r\n$3\r\np30\r\n$8\r\n212.1975\r\n',
        b'*5\r\n*2\r\n$2\r\np0\r\n:3787824449884527\r\n*2\r\n$3\r\np30\r\n:3763670091966591\r\n*2\r\n$3\r\np13\r\n:3763662316343217\r\n*2\r\n$2\r\np9\r\n:3762255948596912\r\n*2\r\n$4\r\np124\r\n:3788126813751557\r\n',
        b'*4\r\n$4\r\np118\r\n$3\r\np10\r\n$4\r\np143\r\n$4\r\np122\r\n',
        b'*144\r\n$4\r\np117\r\n$3\r\np39\r\n$4\r\np116\r\n$3\r\np95\r\n$2\r\np9\r\n$3\r\np89\r\n$3\r\np13\r\n$3\r\np30\r\n$2\r\np0\r\n$4\r\np124\r\n$3\r\np44\r\n$4\r\np148\r\n$2\r\np6\r\n$3\r\np52\r\n$3\r\np66\r\n$3\r\np14\r\n$3\r\np49\r\n$4\r\np101\r\n$3\r\np37\r\n$3\r\np40\r\n$4\r\np136\r\n$4\r\np106\r\n$3\r\np55\r\n$3\r\np51\r\n$4\r\np123\r\n$3\r\np26\r\n$3\r\np54\r\n$3\r\np11\r\n$3\r\np43\r\n$3\r\np38\r\n$3\r\np56\r\n$3\r\np42\r\n$3\r\np41\r\n$3\r\np74\r\n$2\r\np2\r\n$4\r\np127\r\n$3\r\np53\r\n$3\r\np28\r\n$4\r\np140\r\n$3\r\np88\r\n$4\r\np113\r\n$4\r\np129\r\n$4\r\np115\r\n$3\r\np85\r\n$3\r\np77\r\n$4\r\np141\r\n$3\r\np63\r\n$3\r\np98\r\n$3\r\np64\r\n$4\r\np108\r\n$3\r\np62\r\n$4\r\np126\r\n$3\r\np69\r\n$4\r\np103\r\n$3\r\np73\r\n$3\r\np75\r\n$3\r\np96\r\n$4\r\np112\r\n$3\r\np86\r\n$3\r\np23\r\n$3\r\np61\r\n$3\r\np17\r\n$4\r\np125\r\n$4\r\np145\r\n$3\r\np20\r\n$3\r\np35\r\n$3\r\np76\r\n$3\r\np93\r\n$3\r\np87\r\n$3\r\np59\r\n$4\r\np133\r\n$4\r\np120\r\n$4\r\np118\r\n$3\r\np10\r\n$4\r\np143\r\n$4\r\np122\r\n$4\r\np100\r\n$3\r\np48\r\n$3\r\np18\r\n$2\r\np5\r\n$2\r\np4\r\n$4\r\np139\r\n$3\r\np19\r\n$4\r\np121\r\n$3\r\np97\r\n$2\r\np1\r\n$3\r\np91\r\n$4\r\np128\r\n$3\r\np80\r\n$3\r\np15\r\n$4\r\np134\r\n$3\r\np32\r\n$3\r\np70\r\n$2\r\np7\r\n$3\r\np92\r\n$3\r\np94\r\n$3\r\np12\r\n$3\r\np72\r\n$2\r\np3\r\n$3\r\np16\r\n$3\r\np34\r\n$3\r\np78\r\n$4\r\np114\r\n$3\r\np60\r\n$4\r\np110\r\n$3\r\np33\r\n$3\r\np27\r\n$4\r\np105\r\n$3\r\np36\r\n$3\r\np83\r\n$4\r\np107\r\n$4\r\np142\r\n$3\r\np21\r\n$4\r\np130\r\n$3\r\np65\r\n$4\r\np119\r\n$4\r\np146\r\n$4\r\np131\r\n$3\r\np67\r\n$3\r\np58\r\n$3\r\np71\r\n$4\r\np102\r\n$2\r\np8\r\n$3\r\np25\r\n$3\r\np82\r\n$4\r\np147\r\n$3\r\np46\r\n$3\r\np57\r\n$3\r\np22\r\n$4\r\np135\r\n$4\r\np111\r\n$3\r\np50\r\n$3\r\np29\r\n$4\r\np144\r\n$4\r\np149\r\n$3\r\np81\r\n$4\r\np132\r\n$3\r\np99\r\n$3\r\np79\r\n$3\r\np24\r\n$3\r\np84\r\n$4\r\np104\r\n$3\r\np45\r\n$4\r\np137\r\n',
        b'*7\r\n*2\r\n$3\r\np89\r\n$7\r\n60.5065\r\n*2\r\n$4\r\np124\r\n$7\r\n92.4817\r\n*2\r\n$2\r\np9\r\n$7\r\n96.0281\r\n*2\r\n$3\r\np13\r\n$8\r\n170.3685\r\n*2\r\n$2\r\np6\r\n$8\r\n183.9746\r\n*2\r\n$3\r\np39\r\n$8\r\n202.7017\r\n*2\r\n$3\r\np30\r\n$8\r\n212.1975\r\n',
        b'*5\r\n*2\r\n$2\r\np2\r\n:3939885443882586\r\n*2\r\n$3\r\np46\r\n:2204815113676914\r\n*2\r\n$3\r\np25\r\n:2111028112636355\r\n*2\r\n$4\r\np111\r\n:2206971189873444\r\n*2\r\n$3\r\np74\r\n:3938331471832417\r\n',
        b'*4\r\n$3\r\np59\r\n$4\r\np133\r\n$4\r\np109\r\n$4\r\np120\r\n',
        b'*150\r\n$4\r\np117\r\n$3\r\np39\r\n$4\r\np116\r\n$3\r\np95\r\n$2\r\np9\r\n$3\r\np89\r\n$3\r\np13\r\n$3\r\np30\r\n$2\r\np0\r\n$4\r\np124\r\n$3\r\np44\r\n$4\r\np148\r\n$2\r\np6\r\n$3\r\np52\r\n$3\r\np66\r\n$3\r\np14\r\n$3\r\np49\r\n$4\r\np101\r\n$3\r\np37\r\n$3\r\np40\r\n$4\r\np136\r\n$4\r\np106\r\n$3\r\np55\r\n$3\r\np51\r\n$4\r\np123\r\n$3\r\np26\r\n$3\r\np54\r\n$3\r\np11\r\n$3\r\np43\r\n$3\r\np38\r\n$3\r\np56\r\n$3\r\np42\r\n$3\r\np41\r\n$3\r\np74\r\n$2\r\np2\r\n$4\r\np127\r\n$3\r\np53\r\n$3\r\np28\r\n$4\r\np140\r\n$3\r\np88\r\n$4\r\np113\r\n$4\r\np129\r\n$4\r\np115\r\n$3\r\np85\r\n$3\r\np77\r\n$4\r\np141\r\n$3\r\np63\r\n$3\r\np98\r\n$3\r\np64\r\n$4\r\np108\r\n$3\r\np62\r\n$4\r\np126\r\n$3\r\np69\r\n$4\r\np103\r\n$3\r\np73\r\n$3\r\np75\r\n$3\r\np96\r\n$4\r\np112\r\n$3\r\np86\r\n$3\r\np23\r\n$3\r\np61\r\n$3\r\np17\r\n$4\r\np125\r\n$3\r\np31\r\n$4\r\np145\r\n$3\r\np20\r\n$3\r\np35\r\n$3\r\np76\r\n$3\r\np93\r\n$4\r\np138\r\n$3\r\np87\r\n$3\r\np59\r\n$4\r\np133\r\n$4\r\np109\r\n$4\r\np120\r\n$3\r\np68\r\n$4\r\np118\r\n$3\r\np10\r\n$4\r\np143\r\n$4\r\np122\r\n$4\r\np100\r\n$3\r\np48\r\n$3\r\np47\r\n$3\r\np18\r\n$3\r\np90\r\n$2\r\np5\r\n$2\r\np4\r\n$4\r\np139\r\n$3\r\np19\r\n$4\r\np121\r\n$3\r\np97\r\n$2\r\np1\r\n$3\r\np91\r\n$4\r\np128\r\n$3\r\np80\r\n$3\r\np15\r\n$4\r\np134\r\n$3\r\np32\r\n$3\r\np70\r\n$2\r\np7\r\n$3\r\np92\r\n$3\r\np94\r\n$3\r\np12\r\n$3\r\np72\r\n$2\r\np3\r\n$3\r\np16\r\n$3\r\np34\r\n$3\r\np78\r\n$4\r\np114\r\n$3\r\np60\r\n$4\r\np110\r\n$3\r\np33\r\n$3\r\np27\r\n$4\r\np105\r\n$3\r\np36\r\n$3\r\np83\r\n$4\r\np107\r\n$4\r\np142\r\n$3\r\np21\r\n$4\r\np130\r\n$3\r\np65\r\n$4\r\np119\r\n$4\r\np146\r\n$4\r\np131\r\n$3\r\np67\r\n$3\r\np58\r\n$3\r\np71\r\n$4\r\np102\r\n$2\r\np8\r\n$3\r\np25\r\n$3\r\np82\r\n$4\r\np147\r\n$3\r\np46\r\n$3\r\np57\r\n$3\r\np22\r\n$4\r\np135\r\n$4\r\np111\r\n$3\r\np50\r\n$3\r\np29\r\n$4\r\np144\r\n$4\r\np149\r\n$3\r\np81\r\n$4\r\np132\r\n$3\r\np99\r\n$3\r\np79\r\n$3\r\np24\r\n$3\r\np84\r\n$4\r\np104\r\n$3\r\np45\r\n$4\r\np137\r\n',
        b'*7\r\n*2\r\n$3\r\np89\r\n$7\r\n60.5065\r\n*2\r\n$4\r\np124\r\n$7\r\n92.4817\r\n*2\r\n$2\r\np9\r\n$7\r\n96.0281\r\n*2\r\n$3\r\np13\r\n$8\r\n170.3685\r\n*2\r\n$2\r\np6\r\n$8\r\n183.9746\r\n*2\r\n$3\r\np39\r\n$8\r\n202.7017\r\n*2\r\n$3\r\np30\r\n$8\r\n212.1975\r\n',
        b'*5\r\n*2\r\n$3\r\np68\r\n:1511039010371187\r\n*2\r\n$4\r\np109\r\n:1502943714173873\r\n*2\r\n$4\r\np138\r\n:4502372813654118\r\n*2\r\n$3\r\np47\r\n:1537421446810778\r\n*2\r\n$3\r\np31\r\n:4492882465706510\r\n',
        b'*4\r\n$3\r\np59\r\n$4\r\np133\r\n$4\r\np109\r\n$4\r\np120\r\n',
        b'*10\r\n*2\r\n$3\r\np89\r\n$7\r\n60.5065\r\n*2\r\n$4\r\np124\r\n$7\r\n92.4817\r\n*2\r\n$2\r\np9\r\n$7\r\n96.0281\r\n*2\r\n$3\r\np13\r\n$8\r\n170.3685\r\n*2\r\n$3\r\np39\r\n$8\r\n202.7017\r\n*2\r\n$3\r\np30\r\n$8\r\n212.1975\r\n*2\r\n$2\r\np0\r\n$8\r\n213.2175\r\n*2\r\n$4\r\np117\r\n$8\r\n285.5918\r\n*2\r\n$4\r\np116\r\n$8\r\n292.8431\r\n*2\r\n$3\r\np95\r\n$8\r\n328.7576\r\n',
        b':12\r\n',
        b'*24\r\n$3\r\np89\r\n$17\r\n60.50652379499875\r\n$4\r\np124\r\n$17\r\n92.48166210551248\r\n$2\r\np9\r\n$17\r\n96.02808788406519\r\n$3\r\np13\r\n$18\r\n170.36852784454896\r\n$2\r\np6\r\n$18\r\n183.97462263734843\r\n$3\r\np39\r\n$18\r\n202.70173521673428\r\n$3\r\np30\r\n$18\r\n212.19749174730137\r\n$2\r\np0\r\n$18\r\n213.21745715746965\r\n$4\r\np148\r\n$18\r\n219.81180284390325\r\n$4\r\np137\r\n$18\r\n236.87036022527533\r\n$4\r\np117\r\n$18\r\n285.59175881281294\r\n$4\r\np116\r\n$18\r\n292.84305776130935\r\n',
        b'$8\r\nlistpack\r\n',
    ],
    'dateline': [
        b':200\r\n',
        b'*0\r\n',
        b'*0\r\n',
        b'*0\r\n',
        b'*1\r\n$4\r\np1_1\r\n',
        b'*27\r\n$6\r\np95_95\r\n$7\r\np13_113\r\n$6\r\np6_106\r\n$7\r\np61_161\r\n$7\r\np65_165\r\n$7\r\np85_185\r\n$7\r\np80_180\r\n$6\r\np82_82\r\n$7\r\np73_173\r\n$6\r\np16_16\r\n$6\r\np64_64\r\n$6\r\np60_60\r\n$7\r\np84_184\r\n$6\r\np67_67\r\n$7\r\np15_115\r\n$7\r\np72_172\r\n$7\r\np27_127\r\n$7\r\np86_186\r\n$6\r\np48_48\r\n$7\r\np30_130\r\n$7\r\np96_196\r\n$6\r\np2_102\r\n$6\r\np66_66\r\n$6\r\np97_97\r\n$7\r\np49_149\r\n$7\r\np63_163\r\n$7\r\np33_133\r\n',
        b'*7\r\n*2\r\n$7\r\np73_173\r\n$6\r\n4.4924\r\n*2\r\n$6\r\np16_16\r\n$6\r\n4.9408\r\n*2\r\n$7\r\np96_196\r\n$6\r\n9.4386\r\n*2\r\n$7\r\np85_185\r\n$7\r\n10.8139\r\n*2\r\n$7\r\np80_180\r\n$7\r\n13.2088\r\n*2\r\n$6\r\np48_48\r\n$7\r\n13.2290\r\n*2\r\n$7\r\np61_161\r\n$7\r\n13.5455\r\n',
        b'*5\r\n*2\r\n$6\r\np95_95\r\n:3371841275958602\r\n*2\r\n$7\r\np15_115\r\n:369453233684050\r\n*2\r\n$7\r\np84_184\r\n:369441667701933\r\n*2\r\n$7\r\np63_163\r\n:369504941558484\r\n*2\r\n$6\r\np60_60\r\n:3371904078440127\r\n',
        b'*4\r\n$6\r\np99_99\r\n$6\r\np19_19\r\n$6\r\np53_53\r\n$6\r\np37_37\r\n',
        b'*129\r\n$6\r\np24_24\r\n$4\r\np1_1\r\n$6\r\np21_21\r\n$6\r\np98_98\r\n$6\r\np57_57\r\n$6\r\np31_31\r\n$6\r\np20_20\r\n$6\r\np34_34\r\n$6\r\np32_32\r\n$6\r\np80_80\r\n$6\r\np12_12\r\n$6\r\np95_95\r\n$6\r\np61_61\r\n$6\r\np89_89\r\n$4\r\np5_5\r\n$4\r\np4_4\r\n$6\r\np28_28\r\n$6\r\np79_79\r\n$6\r\np18_18\r\n$6\r\np23_23\r\n$6\r\np94_94\r\n$6\r\np22_22\r\n$7\r\np13_113\r\n$6\r\np6_106\r\n$7\r\np61_161\r\n$7\r\np65_165\r\n$7\r\np85_185\r\n$7\r\np80_180\r\n$6\r\np51_51\r\n$6\r\np82_82\r\n$6\r\np71_71\r\n$7\r\np73_173\r\n$6\r\np16_16\r\n$4\r\np2_2\r\n$6\r\np26_26\r\n$6\r\np17_17\r\n$6\r\np11_11\r\n$4\r\np7_7\r\n$6\r\np49_49\r\n$6\r\np65_65\r\n$6\r\np69_69\r\n$6\r\np50_50\r\n$6\r\np55_55\r\n$4\r\np6_6\r\n$6\r\np42_42\r\n$6\r\np64_64\r\n$6\r\np30_30\r\n$6\r\np59_59\r\n$6\r\np77_77\r\n$6\r\np60_60\r\n$6\r\np10_10\r\n$6\r\np81_81\r\n$7\r\np95_195\r\n$6\r\np58_58\r\n$6\r\np78_78\r\n$6\r\np73_73\r\n$6\r\np52_52\r\n$6\r\np54_54\r\n$7\r\np83_183\r\n$6\r\np29_29\r\n$6\r\np92_92\r\n$6\r\np86_86\r\n$7\r\np37_137\r\n$7\r\np91_191\r\n$6\r\np33_33\r\n$7\r\np60_160\r\n$4\r\np0_0\r\n$7\r\np44_144\r\n$6\r\np68_68\r\n$7\r\np51_151\r\n$7\r\np24_124\r\n$6\r\np38_38\r\n$7\r\np10_110\r\n$7\r\np84_184\r\n$7\r\np29_129\r\n$7\r\np16_116\r\n$7\r\np92_192\r\n$6\r\np1_101\r\n$7\r\np57_157\r\n$6\r\np67_67\r\n$7\r\np15_115\r\n$7\r\np72_172\r\n$7\r\np27_127\r\n$7\r\np86_186\r\n$6\r\np48_48\r\n$7\r\np30_130\r\n$7\r\np50_150\r\n$7\r\np96_196\r\n$6\r\np2_102\r\n$6\r\np66_66\r\n$6\r\np97_97\r\n$7\r\np19_119\r\n$7\r\np47_147\r\n$7\r\np58_158\r\n$7\r\np34_134\r\n$7\r\np62_162\r\n$7\r\np76_176\r\n$7\r\np55_155\r\n$7\r\np99_199\r\n$7\r\np53_153\r\n$7\r\np49_149\r\n$7\r\np63_163\r\n$7\r\np33_133\r\n$7\r\np17_117\r\n$6\r\np85_85\r\n$6\r\np36_36\r\n$7\r\np66_166\r\n$6\r\np7_107\r\n$7\r\np23_123\r\n$7\r\np31_131\r\n$7\r\np25_125\r\n$7\r\np46_146\r\n$7\r\np77_177\r\n$6\r\np3_103\r\n$7\r\np64_164\r\n$6\r\np4_104\r\n$7\r\np97_197\r\n$7\r\np45_145\r\n$7\r\np81_181\r\n$7\r\np42_142\r\n$7\r\np70_170\r\n$7\r\np59_159\r\n$6\r\np75_75\r\n$6\r\np62_62\r\n$6\r\np93_93\r\n$7\r\np74_174\r\n$7\r\np36_136\r\n$7\r\np40_140\r\n$7\r\np28_128\r\n',
        b'*7\r\n*2\r\n$7\r\np73_173\r\n$6\r\n4.4924\r\n*2\r\n$6\r\np16_16\r\n$6\r\n4.9408\r\n*2\r\n$7\r\np96_196\r\n$6\r\n9.4386\r\n*2\r\n$7\r\np85_185\r\n$7\r\n10.8139\r\n*2\r\n$7\r\np80_180\r\n$7\r\n13.2088\r\n*2\r\n$6\r\np48_48\r\n$7\r\n13.2290\r\n*2\r\n$7\r\np61_161\r\n$7\r\n13.5455\r\n',
        b'*5\r\n*2\r\n$7\r\np40_140\r\n:369525078542646\r\n*2\r\n$6\r\np29_29\r\n:3371913022835843\r\n*2\r\n$7\r\np74_174\r\n:369524320862771\r\n*2\r\n$6\r\np33_33\r\n:3371922730047879\r\n*2\r\n$7\r\np36_136\r\n:369524366223232\r\n',
        b'*4\r\n$6\r\np25_25\r\n$4\r\np8_8\r\n$6\r\np15_15\r\n$6\r\np96_96\r\n',
        b'*200\r\n$6\r\np25_25\r\n$4\r\np8_8\r\n$6\r\np15_15\r\n$6\r\np96_96\r\n$6\r\np99_99\r\n$6\r\np19_19\r\n$6\r\np53_53\r\n$6\r\np37_37\r\n$6\r\np63_63\r\n$6\r\np87_87\r\n$6\r\np91_91\r\n$6\r\np40_40\r\n$6\r\np41_41\r\n$6\r\np47_47\r\n$6\r\np88_88\r\n$4\r\np3_3\r\n$6\r\np35_35\r\n$6\r\np72_72\r\n$6\r\np46_46\r\n$6\r\np24_24\r\n$6\r\np14_14\r\n$4\r\np1_1\r\n$6\r\np21_21\r\n$6\r\np98_98\r\n$6\r\np57_57\r\n$6\r\np31_31\r\n$6\r\np20_20\r\n$6\r\np34_34\r\n$6\r\np32_32\r\n$6\r\np80_80\r\n$6\r\np12_12\r\n$6\r\np95_95\r\n$6\r\np61_61\r\n$6\r\np89_89\r\n$4\r\np5_5\r\n$4\r\np4_4\r\n$6\r\np28_28\r\n$6\r\np79_79\r\n$6\r\np18_18\r\n$6\r\np23_23\r\n$6\r\np94_94\r\n$6\r\np22_22\r\n$7\r\np13_113\r\n$6\r\np6_106\r\n$7\r\np61_161\r\n$7\r\np65_165\r\n$7\r\np85_185\r\n$7\r\np80_180\r\n$6\r\np51_51\r\n$6\r\np82_82\r\n$6\r\np71_71\r\n$7\r\np73_173\r\n$6\r\np16_16\r\n$6\r\np70_70\r\n$6\r\np74_74\r\n$6\r\np83_83\r\n$6\r\np56_56\r\n$6\r\np39_39\r\n$6\r\np44_44\r\n$6\r\np45_45\r\n$6\r\np90_90\r\n$6\r\np84_84\r\n$6\r\np43_43\r\n$6\r\np27_27\r\n$4\r\np9_9\r\n$6\r\np13_13\r\n$6\r\np76_76\r\n$4\r\np2_2\r\n$6\r\np26_26\r\n$6\r\np17_17\r\n$6\r\np11_11\r\n$4\r\np7_7\r\n$6\r\np49_49\r\n$6\r\np65_65\r\n$6\r\np69_69\r\n$6\r\np50_50\r\n$6\r\np55_55\r\n$4\r\np6_6\r\n$6\r\np42_42\r\n$6\r\np64_64\r\n$6\r\np30_30\r\n$6\r\np59_59\r\n$6\r\np77_77\r\n$6\r\np60_60\r\n$6\r\np10_10\r\n$6\r\np81_81\r\n$7\r\np95_195\r\n$6\r\np58_58\r\n$6\r\np78_78\r\n$6\r\np73_73\r\n$6\r\np52_52\r\n$6\r\np54_54\r\n$7\r\np83_183\r\n$6\r\np29_29\r\n$6\r\np92_92\r\n$6\r\np86_86\r\n$7\r\np37_137\r\n$7\r\np91_191\r\n$6\r\np33_33\r\n$7\r\np60_160\r\n$4\r\np0_0\r\n$7\r\np44_144\r\n$6\r\np68_68\r\n$7\r\np51_151\r\n$7\r\np24_124\r\n$6\r\np38_38\r\n$7\r\np10_110\r\n$7\r\np84_184\r\n$7\r\np29_129\r\n$7\r\np16_116\r\n$7\r\np92_192\r\n$6\r\np1_101\r\n$7\r\np57_157\r\n$7\r\np90_190\r\n$6\r\np67_67\r\n$7\r\np15_115\r\n$7\r\np72_172\r\n$7\r\np27_127\r\n$7\r\np86_186\r\n$6\r\np48_48\r\n$7\r\np30_130\r\n$7\r\np50_150\r\n$7\r\np96_196\r\n$6\r\np2_102\r\n$6\r\np66_66\r\n$6\r\np97_97\r\n$7\r\np19_119\r\n$7\r\np47_147\r\n$7\r\np58_158\r\n$7\r\np34_134\r\n$7\r\np62_162\r\n$7\r\np76_176\r\n$7\r\np55_155\r\n$7\r\np99_199\r\n$7\r\np53_153\r\n$7\r\np67_167\r\n$7\r\np43_143\r\n$7\r\np71_171\r\n$7\r\np68_168\r\n$7\r\np14_114\r\n$7\r\np39_139\r\n$7\r\np52_152\r\n$7\r\np20_120\r\n$6\r\np8_108\r\n$7\r\np56_156\r\n$7\r\np11_111\r\n$7\r\np22_122\r\n$7\r\np88_188\r\n$7\r\np35_135\r\n$7\r\np93_193\r\n$7\r\np89_189\r\n$6\r\np9_109\r\n$7\r\np49_149\r\n$7\r\np63_163\r\n$7\r\np33_133\r\n$7\r\np17_117\r\n$6\r\np85_85\r\n$6\r\np36_36\r\n$7\r\np66_166\r\n$6\r\np7_107\r\n$7\r\np23_123\r\n$7\r\np31_131\r\n$7\r\np25_125\r\n$7\r\np46_146\r\n$7\r\np77_177\r\n$6\r\np3_103\r\n$7\r\np64_164\r\n$6\r\np4_104\r\n$7\r\np97_197\r\n$7\r\np45_145\r\n$7\r\np81_181\r\n$7\r\np42_142\r\n$7\r\np70_170\r\n$7\r\np59_159\r\n$7\r\np38_138\r\n$7\r\np12_112\r\n$7\r\np87_187\r\n$6\r\np0_100\r\n$6\r\np75_75\r\n$6\r\np62_62\r\n$6\r\np93_93\r\n$7\r\np74_174\r\n$7\r\np36_136\r\n$7\r\np40_140\r\n$7\r\np28_128\r\n$7\r\np82_182\r\n$6\r\np5_105\r\n$7\r\np26_126\r\n$7\r\np18_118\r\n$7\r\np78_178\r\n$7\r\np41_141\r\n$7\r\np94_194\r\n$7\r\np48_148\r\n$7\r\np75_175\r\n$7\r\np21_121\r\n$7\r\np98_198\r\n$7\r\np69_169\r\n$7\r\np79_179\r\n$7\r\np54_154\r\n$7\r\np32_132\r\n',
        b'*7\r\n*2\r\n$7\r\np73_173\r\n$6\r\n4.4924\r\n*2\r\n$6\r\np16_16\r\n$6\r\n4.9408\r\n*2\r\n$7\r\np96_196\r\n$6\r\n9.4386\r\n*2\r\n$7\r\np85_185\r\n$7\r\n10.8139\r\n*2\r\n$7\r\np80_180\r\n$7\r\n13.2088\r\n*2\r\n$6\r\np48_48\r\n$7\r\n13.2290\r\n*2\r\n$7\r\np61_161\r\n$7\r\n13.5455\r\n',
        b'*5\r\n*2\r\n$7\r\np32_132\r\n:369565098100455\r\n*2\r\n$7\r\np69_169\r\n:369559112659735\r\n*2\r\n$7\r\np14_114\r\n:369483154757575\r\n*2\r\n$7\r\np54_154\r\n:369559211923521\r\n*2\r\n$6\r\np9_109\r\n:369501518037686\r\n',
        b'*4\r\n$6\r\np25_25\r\n$4\r\np8_8\r\n$6\r\np15_15\r\n$6\r\np96_96\r\n',
        b'*200\r\n$6\r\np25_25\r\n$4\r\np8_8\r\n$6\r\np15_15\r\n$6\r\np96_96\r\n$6\r\np99_99\r\n$6\r\np19_19\r\n$6\r\np53_53\r\n$6\r\np37_37\r\n$6\r\np63_63\r\n$6\r\np87_87\r\n$6\r\np91_91\r\n$6\r\np40_40\r\n$6\r\np41_41\r\n$6\r\np47_47\r\n$6\r\np88_88\r\n$4\r\np3_3\r\n$6\r\np35_35\r\n$6\r\np72_72\r\n$6\r\np46_46\r\n$6\r\np24_24\r\n$6\r\np14_14\r\n$4\r\np1_1\r\n$6\r\np21_21\r\n$6\r\np98_98\r\n$6\r\np57_57\r\n$6\r\np31_31\r\n$6\r\np20_20\r\n$6\r\np34_34\r\n$6\r\np32_32\r\n$6\r\np80_80\r\n$6\r\np12_12\r\n$6\r\np95_95\r\n$6\r\np61_61\r\n$6\r\np89_89\r\n$4\r\np5_5\r\n$4\r\np4_4\r\n$6\r\np28_28\r\n$6\r\np79_79\r\n$6\r\np18_18\r\n$6\r\np23_23\r\n$6\r\np94_94\r\n$6\r\np22_22\r\n$7\r\np13_113\r\n$6\r\np6_106\r\n$7\r\np61_161\r\n$7\r\np65_165\r\n$7\r\np85_185\r\n$7\r\np80_180\r\n$6\r\np51_51\r\n$6\r\np82_82\r\n$6\r\np71_71\r\n$7\r\np73_173\r\n$6\r\np16_16\r\n$6\r\np70_70\r\n$6\r\np74_74\r\n$6\r\np83_83\r\n$6\r\np56_56\r\n$6\r\np39_39\r\n$6\r\np44_44\r\n$6\r\np45_45\r\n$6\r\np90_90\r\n$6\r\np84_84\r\n$6\r\np43_43\r\n$6\r\np27_27\r\n$4\r\np9_9\r\n$6\r\np13_13\r\n$6\r\np76_76\r\n$4\r\np2_2\r\n$6\r\np26_26\r\n$6\r\np17_17\r\n$6\r\np11_11\r\n$4\r\np7_7\r\n$6\r\np49_49\r\n$6\r\np65_65\r\n$6\r\np69_69\r\n$6\r\np50_50\r\n$6\r\np55_55\r\n$4\r\np6_6\r\n$6\r\np42_42\r\n$6\r\np64_64\r\n$6\r\np30_30\r\n$6\r\np59_59\r\n$6\r\np77_77\r\n$6\r\np60_60\r\n$6\r\np10_10\r\n$6\r\np81_81\r\n$7\r\np95_195\r\n$6\r\np58_58\r\n$6\r\np78_78\r\n$6\r\np73_73\r\n$6\r\np52_52\r\n$6\r\np54_54\r\n$7\r\np83_183\r\n$6\r\np29_29\r\n$6\r\np92_92\r\n$6\r\np86_86\r\n$7\r\np37_137\r\n$7\r\np91_191\r\n$6\r\np33_33\r\n$7\r\np60_160\r\n$4\r\np0_0\r\n$7\r\np44_144\r\n$6\r\np68_68\r\n$7\r\np51_151\r\n$7\r\np24_124\r\n$6\r\np38_38\r\n$7\r\np10_110\r\n$7\r\np84_184\r\n$7\r\np29_129\r\n$7\r\np16_116\r\n$7\r\np92_192\r\n$6\r\np1_101\r\n$7\r\np57_157\r\n$7\r\np90_190\r\n$6\r\np67_67\r\n$7\r\np15_115\r\n$7\r\np72_172\r\n$7\r\np27_127\r\n$7\r\np86_186\r\n$6\r\np48_48\r\n$7\r\np30_130\r\n$7\r\np50_150\r\n$7\r\np96_196\r\n$6\r\np2_102\r\n$6\r\np66_66\r\n$6\r\np97_97\r\n$7\r\np19_119\r\n$7\r\np47_147\r\n$7\r\np58_158\r\n$7\r\np34_134\r\n$7\r\np62_162\r\n$7\r\np76_176\r\n$7\r\np55_155\r\n$7\r\np99_199\r\n$7\r\np53_153\r\n$7\r\np67_167\r\n$7\r\np43_143\r\n$7\r\np71_171\r\n$7\r\np68_168\r\n$7\r\np14_114\r\n$7\r\np39_139\r\n$7\r\np52_152\r\n$7\r\np20_120\r\n$6\r\np8_108\r\n$7\r\np56_156\r\n$7\r\np11_111\r\n$7\r\np22_122\r\n$7\r\np88_188\r\n$7\r\np35_135\r\n$7\r\np93_193\r\n$7\r\np89_189\r\n$6\r\np9_109\r\n$7\r\np49_149\r\n$7\r\np63_163\r\n$7\r\np33_133\r\n$7\r\np17_117\r\n$6\r\np85_85\r\n$6\r\np36_36\r\n$7\r\np66_166\r\n$6\r\np7_107\r\n$7\r\np23_123\r\n$7\r\np31_131\r\n$7\r\np25_125\r\n$7\r\np46_146\r\n$7\r\np77_177\r\n$6\r\np3_103\r\n$7\r\np64_164\r\n$6\r\np4_104\r\n$7\r\np97_197\r\n$7\r\np45_145\r\n$7\r\np81_181\r\n$7\r\np42_142\r\n$7\r\np70_170\r\n$7\r\np59_159\r\n$7\r\np38_138\r\n$7\r\np12_112\r\n$7\r\np87_187\r\n$6\r\np0_100\r\n$6\r\np75_75\r\n$6\r\np62_62\r\n$6\r\np93_93\r\n$7\r\np74_174\r\n$7\r\np36_136\r\n$7\r\np40_140\r\n$7\r\np28_128\r\n$7\r\np82_182\r\n$6\r\np5_105\r\n$7\r\np26_126\r\n$7\r\np18_118\r\n$7\r\np78_178\r\n$7\r\np41_141\r\n$7\r\np94_194\r\n$7\r\np48_148\r\n$7\r\np75_175\r\n$7\r\np21_121\r\n$7\r\np98_198\r\n$7\r\np69_169\r\n$7\r\np79_179\r\n$7\r\np54_154\r\n$7\r\np32_132\r\n',
        b'*7\r\n*2\r\n$7\r\np73_173\r\n$6\r\n4.4924\r\n*2\r\n$6\r\np16_16\r\n$6\r\n4.9408\r\n*2\r\n$7\r\np96_196\r\n$6\r\n9.4386\r\n*2\r\n$7\r\np85_185\r\n$7\r\n10.8139\r\n*2\r\n$7\r\np80_180\r\n$7\r\n13.2088\r\n*2\r\n$6\r\np48_48\r\n$7\r\n13.2290\r\n*2\r\n$7\r\np61_161\r\n$7\r\n13.5455\r\n',
        b'*5\r\n*2\r\n$7\r\np32_132\r\n:369565098100455\r\n*2\r\n$7\r\np69_169\r\n:369559112659735\r\n*2\r\n$7\r\np14_114\r\n:369483154757575\r\n*2\r\n$7\r\np54_154\r\n:369559211923521\r\n*2\r\n$6\r\np9_109\r\n:369501518037686\r\n',
        b'*4\r\n$6\r\np25_25\r\n$4\r\np8_8\r\n$6\r\np15_15\r\n$6\r\np96_96\r\n',
        b'*200\r\n$6\r\np25_25\r\n$4\r\np8_8\r\n$6\r\np15_15\r\n$6\r\np96_96\r\n$6\r\np99_99\r\n$6\r\np19_19\r\n$6\r\np53_53\r\n$6\r\np37_37\r\n$6\r\np63_63\r\n$6\r\np87_87\r\n$6\r\np91_91\r\n$6\r\np40_40\r\n$6\r\np41_41\r\n$6\r\np47_47\r\n$6\r\np88_88\r\n$4\r\np3_3\r\n$6\r\np35_35\r\n$6\r\np72_72\r\n$6\r\np46_46\r\n$6\r\np24_24\r\n$6\r\np14_14\r\n$4\r\np1_1\r\n$6\r\np21_21\r\n$6\r\np98_98\r\n$6\r\np57_57\r\n$6\r\np31_31\r\n$6\r\np20_20\r\n$6\r\np34_34\r\n$6\r\np32_32\r\n$6\r\np80_80\r\n$6\r\np12_12\r\n$6\r\np95_95\r\n$6\r\np61_61\r\n$6\r\np89_89\r\n$4\r\np5_5\r\n$4\r\np4_4\r\n$6\r\np28_28\r\n$6\r\np79_79\r\n$6\r\np18_18\r\n$6\r\np23_23\r\n$6\r\np94_94\r\n$6\r\np22_22\r\n$7\r\np13_113\r\n$6\r\np6_106\r\n$7\r\np61_161\r\n$7\r\np65_165\r\n$7\r\np85_185\r\n$7\r\np80_180\r\n$6\r\np51_51\r\n$6\r\np82_82\r\n$6\r\np71_71\r\n$7\r\np73_173\r\n$6\r\np16_16\r\n$6\r\np70_70\r\n$6\r\np74_74\r\n$6\r\np83_83\r\n$6\r\np56_56\r\n$6\r\np39_39\r\n$6\r\np44_44\r\n$6\r\np45_45\r\n$6\r\np90_90\r\n$6\r\np84_84\r\n$6\r\np43_43\r\n$6\r\np27_27\r\n$4\r\np9_9\r\n$6\r\np13_13\r\n$6\r\np76_76\r\n$4\r\np2_2\r\n$6\r\np26_26\r\n$6\r\np17_17\r\n$6\r\np11_11\r\n$4\r\np7_7\r\n$6\r\np49_49\r\n$6\r\np65_65\r\n$6\r\np69_69\r\n$6\r\np50_50\r\n$6\r\np55_55\r\n$4\r\np6_6\r\n$6\r\np42_42\r\n$6\r\np64_64\r\n$6\r\np30_30\r\n$6\r\np59_59\r\n$6\r\np77_77\r\n$6\r\np60_60\r\n$6\r\np10_10\r\n$6\r\np81_81\r\n$7\r\np95_195\r\n$6\r\np58_58\r\n$6\r\np78_78\r\n$6\r\np73_73\r\n$6\r\np52_52\r\n$6\r\np54_54\r\n$7\r\np83_183\r\n$6\r\np29_29\r\n$6\r\np92_92\r\n$6\r\np86_86\r\n$7\r\np37_137\r\n$7\r\np91_191\r\n$6\r\np33_33\r\n$7\r\np60_160\r\n$4\r\np0_0\r\n$7\r\np44_144\r\n$6\r\np68_68\r\n$7\r\np51_151\r\n$7\r\np24_124\r\n$6\r\np38_38\r\n$7\r\np10_110\r\n$7\r\np84_184\r\n$7\r\np29_129\r\n$7\r\np16_116\r\n$7\r\np92_192\r\n$6\r\np1_101\r\n$7\r\np57_157\r\n$7\r\np90_190\r\n$6\r\np67_67\r\n$7\r\np15_115\r\n$7\r\np72_172\r\n$7\r\np27_127\r\n$7\r\np86_186\r\n$6\r\np48_48\r\n$7\r\np30_130\r\n$7\r\np50_150\r\n$7\r\np96_196\r\n$6\r\np2_102\r\n$6\r\np66_66\r\n$6\r\np97_97\r\n$7\r\np19_119\r\n$7\r\np47_147\r\n$7\r\np58_158\r\n$7\r\np34_134\r\n$7\r\np62_162\r\n$7\r\np76_176\r\n$7\r\np55_155\r\n$7\r\np99_199\r\n$7\r\np53_153\r\n$7\r\np67_167\r\n$7\r\np43_143\r\n$7\r\np71_171\r\n$7\r\np68_168\r\n$7\r\np14_114\r\n$7\r\np39_139\r\n$7\r\np52_152\r\n$7\r\np20_120\r\n$6\r\np8_108\r\n$7\r\np56_156\r\n$7\r\np11_111\r\n$7\r\np22_122\r\n$7\r\np88_188\r\n$7\r\np35_135\r\n$7\r\np93_193\r\n$7\r\np89_189\r\n$6\r\np9_109\r\n$7\r\np49_149\r\n$7\r\np63_163\r\n$7\r\np33_133\r\n$7\r\np17_117\r\n$6\r\np85_85\r\n$6\r\np36_36\r\n$7\r\np66_166\r\n$6\r\np7_107\r\n$7\r\np23_123\r\n$7\r\np31_131\r\n$7\r\np25_125\r\n$7\r\np46_146\r\n$7\r\np77_177\r\n$6\r\np3_103\r\n$7\r\np64_164\r\n$6\r\np4_104\r\n$7\r\np97_197\r\n$7\r\np45_145\r\n$7\r\np81_181\r\n$7\r\np42_142\r\n$7\r\np70_170\r\n$7\r\np59_159\r\n$7\r\np38_138\r\n$7\r\np12_112\r\n$7\r\np87_187\r\n$6\r\np0_100\r\n$6\r\np75_75\r\n$6\r\np62_62\r\n$6\r\np93_93\r\n$7\r\np74_174\r\n$7\r\np36_136\r\n$7\r\np40_140\r\n$7\r\np28_128\r\n$7\r\np82_182\r\n$6\r\np5_105\r\n$7\r\np26_126\r\n$7\r\np18_118\r\n$7\r\np78_178\r\n$7\r\np41_141\r\n$7\r\np94_194\r\n$7\r\np48_148\r\n$7\r\np75_175\r\n$7\r\np21_121\r\n$7\r\np98_198\r\n$7\r\np69_169\r\n$7\r\np79_179\r\n$7\r\np54_154\r\n$7\r\np32_132\r\n',
        b'*7\r\n*2\r\n$7\r\np73_173\r\n$6\r\n4.4924\r\n*2\r\n$6\r\np16_16\r\n$6\r\n4.9408\r\n*2\r\n$7\r\np96_196\r\n$6\r\n9.4386\r\n*2\r\n$7\r\np85_185\r\n$7\r\n10.8139\r\n*2\r\n$7\r\np80_180\r\n$7\r\n13.2088\r\n*2\r\n$6\r\np48_48\r\n$7\r\n13.2290\r\n*2\r\n$7\r\np61_161\r\n$7\r\n13.5455\r\n',
        b'*5\r\n*2\r\n$7\r\np32_132\r\n:369565098100455\r\n*2\r\n$7\r\np69_169\r\n:369559112659735\r\n*2\r\n$7\r\np14_114\r\n:369483154757575\r\n*2\r\n$7\r\np54_154\r\n:369559211923521\r\n*2\r\n$6\r\np9_109\r\n:369501518037686\r\n',
        b'*4\r\n$6\r\np25_25\r\n$4\r\np8_8\r\n$6\r\np15_15\r\n$6\r\np96_96\r\n',
        b'*10\r\n*2\r\n$6\r\np37_37\r\n$7\r\n83.9630\r\n*2\r\n$6\r\np19_19\r\n$7\r\n94.8175\r\n*2\r\n$6\r\np53_53\r\n$7\r\n96.2077\r\n*2\r\n$6\r\np99_99\r\n$7\r\n99.8220\r\n*2\r\n$6\r\np87_87\r\n$8\r\n103.4667\r\n*2\r\n$6\r\np15_15\r\n$8\r\n103.9989\r\n*2\r\n$6\r\np63_63\r\n$8\r\n113.5358\r\n*2\r\n$6\r\np96_96\r\n$8\r\n113.7800\r\n*2\r\n$4\r\np8_8\r\n$8\r\n118.0517\r\n*2\r\n$6\r\np25_25\r\n$8\r\n120.4622\r\n',
        b':200\r\n',
        b'*400\r\n$7\r\np73_173\r\n$17\r\n4.492352676092191\r\n$6\r\np16_16\r\n$17\r\n4.940812201068719\r\n$7\r\np96_196\r\n$17\r\n9.438593466805308\r\n$7\r\np85_185\r\n$18\r\n10.813883603820582\r\n$7\r\np80_180\r\n$18\r\n13.208758100621916\r\n$6\r\np48_48\r\n$18\r\n13.228956255572234\r\n$7\r\np61_161\r\n$18\r\n13.545461388320247\r\n$7\r\np65_165\r\n$18\r\n13.982835502489559\r\n$6\r\np82_82\r\n$18\r\n14.194258614979784\r\n$6\r\np6_106\r\n$18\r\n14.632448720973663\r\n$7\r\np72_172\r\n$18\r\n15.263137510600433\r\n$6\r\np66_66\r\n$18\r\n15.361923172013775\r\n$6\r\np97_97\r\n$18\r\n15.604878665876589\r\n$7\r\np13_113\r\n$17\r\n20.18789015058014\r\n$7\r\np27_127\r\n$17\r\n20.41490303155976\r\n$7\r\np86_186\r\n$18\r\n20.547776026753873\r\n$6\r\np67_67\r\n$18\r\n21.430367802354493\r\n$7\r\np49_149\r\n$18\r\n21.470096794954742\r\n$6\r\np60_60\r\n$18\r\n21.495062665108144\r\n$6\r\np2_102\r\n$18\r\n21.946198862441495\r\n$7\r\np63_163\r\n$18\r\n22.173887729750685\r\n$7\r\np30_130\r\n$18\r\n22.686936367442033\r\n$7\r\np84_184\r\n$18\r\n23.750876996008174\r\n$7\r\np15_115\r\n$17\r\n24.38270647229041\r\n$6\r\np95_95\r\n$17\r\n24.63169452255099\r\n$7\r\np33_133\r\n$18\r\n24.851897238150695\r\n$6\r\np64_64\r\n$18\r\n24.906728161715733\r\n$7\r\np19_119\r\n$18\r\n25.294044857020495\r\n$6\r\np51_51\r\n$18\r\n25.480222918827174\r\n$7\r\np17_117\r\n$18\r\n28.175463694487718\r\n$6\r\np71_71\r\n$16\r\n28.2788765442622\r\n$6\r\np12_12\r\n$17\r\n28.63255330660099\r\n$6\r\np22_22\r\n$17\r\n29.10255411309142\r\n$6\r\np38_38\r\n$17\r\n30.34857958820273\r\n$7\r\np47_147\r\n$18\r\n30.701556120710315\r\n$7\r\np95_195\r\n$18\r\n31.911233883806567\r\n$6\r\np10_10\r\n$18\r\n32.066350615343204\r\n$6\r\np85_85\r\n$17\r\n32.52372922202089\r\n$6\r\np32_32\r\n$16\r\n33.1094447239886\r\n$7\r\np10_110\r\n$17\r\n33.31472837567295\r\n$7\r\np66_166\r\n$18\r\n33.599377146156584\r\n$7\r\np16_116\r\n$18\r\n33.804461781799496\r\n$6\r\np81_81\r\n$17\r\n33.89246337962147\r\n$6\r\np36_36\r\n$17\r\n34.49743850982437\r\n$6\r\np94_94\r\n$17\r\n35.36701885112269\r\n$7\r\np29_129\r\n$17\r\n36.02885560024142\r\n$6\r\np34_34\r\n$18\r\n37.020992672970614\r\n$6\r\np77_77\r\n$17\r\n37.14502786253649\r\n$7\r\np50_150\r\n$17\r\n37.81822249188094\r\n$7\r\np46_146\r\n$18\r\n37.863314627791404\r\n$6\r\np7_107\r\n$17\r\n37.90927477396014\r\n$6\r\np59_59\r\n$17\r\n38.02446950354528\r\n$6\r\np49_49\r\n$16\r\n38.5537865859577\r\n$7\r\np51_151\r\n$18\r\n39.358194837359804\r\n$7\r\np83_183\r\n$18\r\n39.735701975196505\r\n$6\r\np54_54\r\n$18\r\n39.978191347039555\r\n$7\r\np58_158\r\n$17\r\n40.03157779052191\r\n$6\r\np68_68\r\n$17\r\n40.05120034891361\r\n$6\r\np80_80\r\n$18\r\n40.515189798944384\r\n$6\r\np28_28\r\n$18\r\n41.694144656598596\r\n$4\r\np0_0\r\n$17\r\n41.81920397223533\r\n$6\r\np30_30\r\n$18\r\n42.145480208106214\r\n$7\r\np24_124\r\n$17\r\n42.70627027924997\r\n$7\r\np77_177\r\n$17\r\n43.05771704016419\r\n$6\r\np69_69\r\n$17\r\n43.20365675969742\r\n$7\r\np23_123\r\n$17\r\n43.41130024214518\r\n$7\r\np60_160\r\n$17\r\n43.77845572732078\r\n$7\r\np31_131\r\n$17\r\n44.04542812812749\r\n$7\r\np25_125\r\n$17\r\n45.68088118462686\r\n$4\r\np5_5\r\n$17\r\n45.86663377121683\r\n$7\r\np76_176\r\n$17\r\n46.65506552280125\r\n$4\r\np4_4\r\n$17\r\n46.69652638883592\r\n$6\r\np4_104\r\n$18\r\n47.134710051668094\r\n$6\r\np18_18\r\n$16\r\n48.0359733653494\r\n$6\r\np58_58\r\n$17\r\n48.86095168842741\r\n$6\r\np3_103\r\n$17\r\n49.04106195236471\r\n$4\r\np7_7\r\n$18\r\n49.542926624415145\r\n$6\r\np23_23\r\n$18\r\n49.689564843370306\r\n$7\r\np53_153\r\n$18\r\n49.694609566657164\r\n$7\r\np55_155\r\n$16\r\n49.7745857765198\r\n$6\r\np52_52\r\n$18\r\n50.938273961172975\r\n$7\r\np45_145\r\n$18\r\n51.493229452984274\r\n$6\r\np89_89\r\n$17\r\n51.92404686479154\r\n$7\r\np64_164\r\n$17\r\n52.17596909474256\r\n$6\r\np20_20\r\n$17\r\n53.46119044548291\r\n$7\r\np34_134\r\n$17\r\n53.66500378105914\r\n$6\r\np75_75\r\n$17\r\n53.81830473384728\r\n$6\r\np73_73\r\n$17\r\n54.81972733187082\r\n$7\r\np92_192\r\n$18\r\n55.757121773766904\r\n$6\r\np31_31\r\n$17\r\n56.61997787621422\r\n$6\r\np78_78\r\n$17\r\n57.46950772873908\r\n$7\r\np97_197\r\n$17\r\n58.48545273031499\r\n$6\r\np65_65\r\n$18\r\n58.602662646801676\r\n$7\r\np44_144\r\n$18\r\n58.645208097385634\r\n$6\r\np86_86\r\n$15\r\n58.796164094503\r\n$7\r\np37_137\r\n$17\r\n59.25404219654025\r\n$7\r\np81_181\r\n$17\r\n60.19651159334175\r\n$6\r\np93_93\r\n$17\r\n60.46096432673933\r\n$6\r\np42_42\r\n$17\r\n60.50177102042834\r\n$6\r\np79_79\r\n$16\r\n60.7934188038101\r\n$7\r\np57_157\r\n$18\r\n61.127904014678705\r\n$6\r\np62_62\r\n$18\r\n61.213830282925265\r\n$6\r\np11_11\r\n$17\r\n61.36136800312237\r\n$6\r\np92_92\r\n$17\r\n61.43610910003214\r\n$7\r\np62_162\r\n$17\r\n61.72765143468756\r\n$6\r\np1_101\r\n$17\r\n63.26181040627849\r\n$7\r\np99_199\r\n$17\r\n63.27966712634319\r\n$7\r\np91_191\r\n$17\r\n63.82945503255659\r\n$6\r\np57_57\r\n$17\r\n64.17603413205904\r\n$7\r\np36_136\r\n$16\r\n64.7369612413006\r\n$6\r\np98_98\r\n$17\r\n64.87253043831943\r\n$4\r\np6_6\r\n$17\r\n64.87475865189721\r\n$6\r\np33_33\r\n$17\r\n65.72014977273288\r\n$7\r\np74_174\r\n$17\r\n66.09408375204187\r\n$4\r\np2_2\r\n$17\r\n66.17806124038869\r\n$6\r\np29_29\r\n$17\r\n66.62917197149686\r\n$6\r\np17_17\r\n$16\r\n67.5135322174832\r\n$6\r\np21_21\r\n$17\r\n67.89811173782664\r\n$7\r\np40_140\r\n$17\r\n68.07995590793469\r\n$6\r\np26_26\r\n$17\r\n69.09558128250151\r\n$7\r\np42_142\r\n$17\r\n69.36806656346053\r\n$6\r\np55_55\r\n$17\r\n69.57832136851002\r\n$6\r\np61_61\r\n$16\r\n70.2127000208673\r\n$6\r\np24_24\r\n$17\r\n73.96030438958007\r\n$7\r\np70_170\r\n$17\r\n76.00233816954089\r\n$7\r\np59_159\r\n$17\r\n78.41257213173553\r\n$7\r\np28_128\r\n$17\r\n78.64488143381189\r\n$4\r\np1_1\r\n$17\r\n78.66999152359756\r\n$6\r\np50_50\r\n$17\r\n79.14422273543703\r\n$7\r\np90_190\r\n$17\r\n82.35469537854767\r\n$6\r\np37_37\r\n$17\r\n83.96303071292088\r\n$7\r\np38_138\r\n$17\r\n84.32951817380132\r\n$7\r\np82_182\r\n$17\r\n85.49332842903479\r\n$6\r\np47_47\r\n$17\r\n87.85533810420011\r\n$7\r\np56_156\r\n$17\r\n88.04655983474655\r\n$7\r\np35_135\r\n$17\r\n88.39687705049347\r\n$6\r\np46_46\r\n$17\r\n88.70530264494589\r\n$6\r\np14_14\r\n$17\r\n90.39017349451699\r\n$7\r\np12_112\r\n$16\r\n90.5268889497052\r\n$6\r\np0_100\r\n$17\r\n92.38683198428218\r\n$7\r\np26_126\r\n$17\r\n93.58545574322753\r\n$7\r\np87_187\r\n$17\r\n94.19702014539435\r\n$6\r\np41_41\r\n$17\r\n94.37046863001808\r\n$7\r\np18_118\r\n$17\r\n94.63466525606381\r\n$7\r\np88_188\r\n$17\r\n94.69655196347748\r\n$6\r\np19_19\r\n$17\r\n94.81754004558968\r\n$4\r\np3_3\r\n$16\r\n95.1381538080029\r\n$7\r\np43_143\r\n$17\r\n95.97496195134521\r\n$6\r\np53_53\r\n$17\r\n96.20767042807901\r\n$6\r\np84_84\r\n$16\r\n96.4902392275096\r\n$6\r\np72_72\r\n$17\r\n96.88970398120033\r\n$7\r\np11_111\r\n$16\r\n97.2960337396008\r\n$6\r\np35_35\r\n$17\r\n98.16843974555472\r\n$6\r\np5_105\r\n$17\r\n98.45026618606187\r\n$6\r\np39_39\r\n$17\r\n98.67841610286384\r\n$7\r\np67_167\r\n$17\r\n99.62737932292077\r\n$6\r\np99_99\r\n$17\r\n99.82204694710063\r\n$7\r\np22_122\r\n$18\r\n101.51987575256582\r\n$6\r\np88_88\r\n$18\r\n101.94384139649509\r\n$6\r\np83_83\r\n$17\r\n102.4859716708751\r\n$6\r\np76_76\r\n$18\r\n103.26695038588346\r\n$7\r\np52_152\r\n$18\r\n103.27375145111145\r\n$6\r\np87_87\r\n$18\r\n103.46666772790478\r\n$7\r\np20_120\r\n$18\r\n103.60831915213085\r\n$6\r\np8_108\r\n$17\r\n103.6616200703203\r\n$7\r\np78_178\r\n$17\r\n103.9596979701181\r\n$6\r\np15_15\r\n$18\r\n103.99889405760017\r\n$6\r\np27_27\r\n$18\r\n105.91953240753291\r\n$4\r\np9_9\r\n$18\r\n106.46931542818719\r\n$6\r\np74_74\r\n$18\r\n106.86570559911289\r\n$6\r\np45_45\r\n$18\r\n107.13745798656004\r\n$6\r\np70_70\r\n$18\r\n107.91981508557494\r\n$6\r\np91_91\r\n$17\r\n108.1004445403391\r\n$6\r\np40_40\r\n$18\r\n108.24317005137632\r\n$7\r\np98_198\r\n$18\r\n109.00786929158632\r\n$6\r\np13_13\r\n$18\r\n109.46038871998677\r\n$6\r\np44_44\r\n$18\r\n110.19995247999903\r\n$6\r\np90_90\r\n$18\r\n110.32772690585895\r\n$7\r\np71_171\r\n$18\r\n111.77562964040067\r\n$7\r\np41_141\r\n$18\r\n111.96264559670591\r\n$6\r\np56_56\r\n$18\r\n112.50724879384896\r\n$6\r\np63_63\r\n$18\r\n113.53578684976276\r\n$6\r\np96_96\r\n$18\r\n113.77997090886568\r\n$4\r\np8_8\r\n$18\r\n118.05174130055404\r\n$7\r\np94_194\r\n$18\r\n119.55184158105389\r\n$6\r\np25_25\r\n$18\r\n120.46219236962027\r\n$6\r\np43_43\r\n$18\r\n120.85751345266672\r\n$7\r\np68_168\r\n$18\r\n123.48572259824334\r\n$7\r\np48_148\r\n$18\r\n123.81972024801843\r\n$7\r\np93_193\r\n$18\r\n123.94751438638617\r\n$7\r\np89_189\r\n$18\r\n124.26233630962356\r\n$7\r\np75_175\r\n$18\r\n124.44847340845534\r\n$7\r\np21_121\r\n$18\r\n124.85049609368784\r\n$7\r\np39_139\r\n$17\r\n125.0309411112769\r\n$7\r\np79_179\r\n$17\r\n125.6811094795913\r\n$6\r\np9_109\r\n$18\r\n125.92436706236614\r\n$7\r\np54_154\r\n$18\r\n127.98856799685535\r\n$7\r\np14_114\r\n$18\r\n128.09460668570847\r\n$7\r\np69_169\r\n$18\r\n132.69987318074524\r\n$7\r\np32_132\r\n$18\r\n135.49897158209214\r\n',
        b'$8\r\nskiplist\r\n',
    ],
    'extremes': [
        b':200\r\n',
        b'*0\r\n',
        b'*1\r\n*3\r\n$2\r\np7\r\n$6\r\n0.0000\r\n:3731650799222526\r\n',
        b'*1\r\n*2\r\n$2\r\np7\r\n$6\r\n0.0000\r\n',
        b'*15\r\n*2\r\n$3\r\np32\r\n$9\r\n1142.4774\r\n*2\r\n$4\r\np115\r\n$9\r\n1750.8507\r\n*2\r\n$4\r\np104\r\n$9\r\n3258.9255\r\n*2\r\n$4\r\np171\r\n$9\r\n3412.8690\r\n*2\r\n$2\r\np8\r\n$9\r\n4198.0689\r\n*2\r\n$4\r\np197\r\n$9\r\n4234.5734\r\n*2\r\n$4\r\np155\r\n$9\r\n4238.2378\r\n*2\r\n$4\r\np178\r\n$9\r\n4478.0405\r\n*2\r\n$3\r\np47\r\n$9\r\n4699.3516\r\n*2\r\n$3\r\np29\r\n$9\r\n4717.3804\r\n*2\r\n$4\r\np125\r\n$9\r\n4859.3007\r\n*2\r\n$3\r\np61\r\n$9\r\n4859.9759\r\n*2\r\n$3\r\np95\r\n$9\r\n4895.7483\r\n*2\r\n$4\r\np165\r\n$9\r\n4970.7555\r\n*2\r\n$3\r\np98\r\n$9\r\n5054.0114\r\n',
        b'*42\r\n$4\r\np115\r\n$4\r\np125\r\n$4\r\np168\r\n$3\r\np74\r\n$3\r\np17\r\n$4\r\np101\r\n$2\r\np9\r\n$4\r\np133\r\n$4\r\np162\r\n$3\r\np62\r\n$4\r\np109\r\n$3\r\np11\r\n$3\r\np14\r\n$4\r\np197\r\n$4\r\np192\r\n$4\r\np143\r\n$3\r\np40\r\n$4\r\np130\r\n$3\r\np69\r\n$4\r\np165\r\n$3\r\np29\r\n$3\r\np47\r\n$3\r\np20\r\n$3\r\np95\r\n$4\r\np178\r\n$2\r\np8\r\n$4\r\np177\r\n$3\r\np26\r\n$4\r\np169\r\n$4\r\np170\r\n$4\r\np129\r\n$4\r\np147\r\n$4\r\np156\r\n$4\r\np175\r\n$3\r\np70\r\n$3\r\np98\r\n$3\r\np42\r\n$3\r\np61\r\n$4\r\np155\r\n$4\r\np171\r\n$4\r\np104\r\n$3\r\np32\r\n',
        b'*18\r\n*2\r\n$3\r\np52\r\n$9\r\n2946.3160\r\n*2\r\n$3\r\np38\r\n$9\r\n2939.8294\r\n*2\r\n$4\r\np128\r\n$9\r\n2642.1904\r\n*2\r\n$4\r\np157\r\n$9\r\n2551.5126\r\n*2\r\n$4\r\np181\r\n$9\r\n2316.9729\r\n*2\r\n$3\r\np10\r\n$9\r\n2273.2112\r\n*2\r\n$4\r\np180\r\n$9\r\n1966.6553\r\n*2\r\n$4\r\np138\r\n$9\r\n1813.3005\r\n*2\r\n$3\r\np68\r\n$9\r\n1754.0012\r\n*2\r\n$4\r\np111\r\n$9\r\n1709.9288\r\n*2\r\n$2\r\np2\r\n$9\r\n1694.4324\r\n*2\r\n$3\r\np53\r\n$9\r\n1689.6613\r\n*2\r\n$3\r\np82\r\n$9\r\n1552.8850\r\n*2\r\n$3\r\np83\r\n$9\r\n1442.6079\r\n*2\r\n$3\r\np87\r\n$9\r\n1289.3764\r\n*2\r\n$4\r\np110\r\n$9\r\n1198.0789\r\n*2\r\n$4\r\np100\r\n$8\r\n895.4912\r\n*2\r\n$4\r\np183\r\n$8\r\n764.0219\r\n',
        b'*2\r\n*2\r\n$3\r\np97\r\n$9\r\n1627.1596\r\n*2\r\n$2\r\np5\r\n$9\r\n1930.4199\r\n',
        b'*2\r\n$2\r\np5\r\n$3\r\np97\r\n',
        b'*28\r\n$3\r\np76\r\n$3\r\np60\r\n$3\r\np58\r\n$4\r\np117\r\n$2\r\np1\r\n$4\r\np194\r\n$4\r\np159\r\n$4\r\np106\r\n$3\r\np90\r\n$4\r\np193\r\n$4\r\np145\r\n$4\r\np139\r\n$4\r\np126\r\n$3\r\np84\r\n$4\r\np173\r\n$2\r\np7\r\n$4\r\np176\r\n$4\r\np131\r\n$4\r\np120\r\n$4\r\np161\r\n$4\r\np152\r\n$3\r\np62\r\n$4\r\np191\r\n$3\r\np86\r\n$3\r\np93\r\n$4\r\np164\r\n$3\r\np27\r\n$3\r\np75\r\n',
        b'*3\r\n$3\r\np32\r\n$4\r\np115\r\n$4\r\np104\r\n',
        b'*0\r\n',
        b'*6\r\n$4\r\np115\r\n$4\r\np125\r\n$4\r\np168\r\n$3\r\np74\r\n$3\r\np17\r\n$4\r\np101\r\n',
        b'*6\r\n*2\r\n$4\r\np101\r\n$9\r\n6428.7506\r\n*2\r\n$3\r\np74\r\n$9\r\n5189.3743\r\n*2\r\n$3\r\np17\r\n$9\r\n5159.4129\r\n*2\r\n$4\r\np168\r\n$9\r\n5073.6432\r\n*2\r\n$4\r\np125\r\n$9\r\n4859.3007\r\n*2\r\n$4\r\np115\r\n$9\r\n1750.8507\r\n',
        b'*26\r\n*2\r\n$3\r\np86\r\n$8\r\n300.8527\r\n*2\r\n$3\r\np93\r\n$8\r\n318.6056\r\n*2\r\n$4\r\np164\r\n$8\r\n346.9141\r\n*2\r\n$3\r\np27\r\n$8\r\n356.0164\r\n*2\r\n$3\r\np75\r\n$8\r\n536.3325\r\n*2\r\n$4\r\np176\r\n$8\r\n687.6826\r\n*2\r\n$4\r\np173\r\n$8\r\n759.3426\r\n*2\r\n$4\r\np193\r\n$9\r\n1001.8935\r\n*2\r\n$3\r\np84\r\n$9\r\n1105.8279\r\n*2\r\n$4\r\np106\r\n$9\r\n1193.6854\r\n*2\r\n$4\r\np126\r\n$9\r\n1312.4955\r\n*2\r\n$4\r\np190\r\n$9\r\n1510.7640\r\n*2\r\n$2\r\np1\r\n$9\r\n1549.5687\r\n*2\r\n$4\r\np118\r\n$9\r\n1600.8805\r\n*2\r\n$4\r\np161\r\n$9\r\n1695.5926\r\n*2\r\n$4\r\np142\r\n$9\r\n1702.8180\r\n*2\r\n$3\r\np58\r\n$9\r\n1726.9061\r\n*2\r\n$3\r\np89\r\n$9\r\n1729.9555\r\n*2\r\n$4\r\np194\r\n$9\r\n1815.5447\r\n*2\r\n$4\r\np145\r\n$9\r\n1931.7994\r\n*2\r\n$4\r\np159\r\n$9\r\n2069.5733\r\n*2\r\n$4\r\np135\r\n$9\r\n2093.7932\r\n*2\r\n$4\r\np152\r\n$9\r\n2175.3420\r\n*2\r\n$3\r\np76\r\n$9\r\n2185.7782\r\n*2\r\n$3\r\np23\r\n$9\r\n2355.8099\r\n*2\r\n$3\r\np72\r\n$9\r\n2413.7413\r\n',
        b':27\r\n',
        b'*54\r\n$3\r\np45\r\n$14\r\n94692703858550\r\n$4\r\np196\r\n$15\r\n287973500737547\r\n$3\r\np54\r\n$15\r\n296057783581312\r\n$3\r\np97\r\n$15\r\n350726026777447\r\n$4\r\np127\r\n$15\r\n360087927137525\r\n$3\r\np24\r\n$15\r\n364099105101976\r\n$2\r\np0\r\n$15\r\n374851468614689\r\n$3\r\np64\r\n$15\r\n390082198192552\r\n$3\r\np88\r\n$15\r\n391011638918891\r\n$4\r\np116\r\n$15\r\n409931214688444\r\n$3\r\np21\r\n$15\r\n413401553616699\r\n$4\r\np167\r\n$16\r\n1126745519351560\r\n$3\r\np15\r\n$16\r\n1175690333621718\r\n$3\r\np49\r\n$16\r\n1185747952187393\r\n$4\r\np103\r\n$16\r\n1194358358090086\r\n$2\r\np3\r\n$16\r\n1201781310303019\r\n$3\r\np22\r\n$16\r\n1235706070608189\r\n$3\r\np43\r\n$16\r\n1240335231409284\r\n$4\r\np122\r\n$16\r\n3253409848570638\r\n$3\r\np36\r\n$16\r\n3267140127192844\r\n$4\r\np140\r\n$16\r\n3269798536144775\r\n$3\r\np46\r\n$16\r\n3272026051107071\r\n$4\r\np102\r\n$16\r\n3296148730375076\r\n$3\r\np91\r\n$16\r\n3314639789995144\r\n$4\r\np199\r\n$16\r\n3334434725858331\r\n$4\r\np172\r\n$16\r\n3363405610636921\r\n$4\r\np136\r\n$16\r\n4217975021733677\r\n',
        b':0\r\n',
        b':0\r\n',
    ],
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_redis(server, r, name):
    proto, cmds = SCENARIOS[name]
    expected = GOLDEN[name]
    assert len(cmds) == len(expected)
    c = server.conn()
    try:
        if proto == 3:
            assert not isinstance(c.cmd("HELLO", "3"), Error)
        for cmd, want in zip(cmds, expected):
            got = c.cmd_raw(*cmd)
            assert got == want, "%s: %r" % (name, cmd[:12])
    finally:
        c.close()


def test_wrongtype_keeps_value(conn):
    conn.cmd("RPUSH", "l", "a")
    for cmd in (["GEOADD", "l", "1", "2", "m"], ["GEOPOS", "l", "m"], ["GEODIST", "l", "a", "b"],
                ["GEOSEARCH", "l", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km"]):
        assert conn.cmd(*cmd) == Error("WRONGTYPE Operation against a key holding the wrong kind of value")
    assert conn.cmd("LRANGE", "l", "0", "-1") == [b"a"]


def test_geo_sets_are_sorted_sets(conn):
    assert conn.cmd("GEOADD", "g", "13.361389", "38.115556", "Palermo") == 1
    assert conn.cmd("TYPE", "g") == "zset"
    assert conn.cmd("ZSCORE", "g", "Palermo") == b"3479099956230698"
    assert conn.cmd("ZREM", "g", "Palermo") == 1
    assert conn.cmd("EXISTS", "g") == 0
    # A member past zset-max-listpack-value converts the set to a skiplist.
    long = "m" * 100
    assert conn.cmd("GEOADD", "g", "1", "2", "a", "3", "4", long) == 2
    assert conn.cmd("OBJECT", "ENCODING", "g") == b"skiplist"
    assert conn.cmd("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", "400", "km", "ASC") == [b"a", long.encode()]


def test_command_getkeys(conn):
    assert conn.cmd("COMMAND", "GETKEYS", "GEORADIUS", "src", "1", "2", "3", "km") == [b"src"]
    assert conn.cmd("COMMAND", "GETKEYS", "GEORADIUS", "src", "1", "2", "3", "km", "STORE", "a",
                    "STOREDIST", "b") == [b"src", b"a", b"b"]
    assert conn.cmd("COMMAND", "GETKEYS", "GEORADIUSBYMEMBER", "src", "m", "3", "km", "store", "a") == [b"src", b"a"]
    assert conn.cmd("COMMAND", "GETKEYS", "GEOSEARCHSTORE", "dst", "src", "FROMMEMBER", "m", "BYRADIUS", "1",
                    "km") == [b"dst", b"src"]
    assert conn.cmd("COMMAND", "GETKEYS", "GEORADIUS", "src", "1", "2", "3", "km", "STOREDIST", "b") == [b"src", b"b"]
    info = conn.cmd("COMMAND", "INFO", "GEORADIUS")[0]
    assert info[0] == b"georadius" and info[1] == -6
    assert "movablekeys" in info[2]
    assert info[3:6] == [1, 1, 1]
