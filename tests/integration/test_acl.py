"""ACL users: rules, AUTH, the check on every path (commands, keys,
channels, MULTI/EXEC, scripts, functions, pub/sub), ACL LOG, the ACL file
and config-file users, live connections of changed users, and the check
under concurrency. Version-independent behaviour is compared with the
installed redis-server."""
import hashlib
import os
import threading
import time

import pytest
import redis

from conftest import start_server, stop_checked, real_redis, ref_conn
from resp import RespConn, Error


@pytest.fixture(scope="module")
def srv(request):
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    s = start_server(request.config.getoption("--server-bin"), threads=2)
    yield s
    stop_checked(s)


@pytest.fixture
def admin(srv):
    c = redis.Redis(host=srv.host, port=srv.port, decode_responses=True)
    yield c
    for u in c.acl_users():
        if u != "default":
            c.acl_deluser(u)
    c.execute_command("ACL", "SETUSER", "default", "on", "nopass", "clearselectors", "resetkeys", "resetchannels",
                      "~*", "&*", "+@all")
    c.execute_command("ACL", "LOG", "RESET")
    c.close()


def user_conn(srv, user, pw, **kw):
    return redis.Redis(host=srv.host, port=srv.port, username=user, password=pw, decode_responses=True, **kw)


def err_of(fn, *a):
    try:
        fn(*a)
    except redis.exceptions.ResponseError as e:
        return str(e)
    except redis.exceptions.AuthenticationError as e:
        return str(e)
    return None


def wait_closed(c, timeout=5.0):
    """Whether the server closes connection c within the timeout."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if c.cmd("PING") is None:
                return True
        except Exception:  # noqa: BLE001
            return True
        time.sleep(0.05)
    return False


def raw_err(c, *args):
    r = c.cmd(*args)
    assert isinstance(r, Error), r
    return str(r)


# ---- rules and their descriptions ----------------------------------------

RULE_CASES = [
    ["on", ">p1", "+get", "~k*", "resetchannels", "&ch*"],
    ["on", "nopass", "allkeys", "allchannels", "allcommands"],
    ["off", "#" + "a" * 64, "-@all", "+@read", "-get", "%R~r:*", "%W~w:*", "%RW~b:*"],
    ["on", ">a", ">b", "<a", "+@all", "-@dangerous", "resetkeys", "~x"],
    ["on", "+config|get", "-config|set", "~*", "+set", "-set"],
    ["on", ">x", "resetpass", "nocommands", "+ping", "(+get ~a*)", "(+set ~b* &c)"],
    ["on", "(+get ~a*)", "clearselectors", "+incr"],
    ["reset"],
    ["on", "+@all", "-@write", "+set"],
    ["on", "-@all", "+select|0", "+select|1", "%R~*", "", "&a b"[:2]],
]


def list_line(c, name):
    for line in c.execute_command("ACL", "LIST"):
        if isinstance(line, bytes):
            line = line.decode()
        if line.startswith("user %s " % name):
            return line
    return None


@pytest.mark.parametrize("rules", RULE_CASES)
def test_rules_described_like_redis(admin, redis_ref, rules):
    admin.execute_command("ACL", "SETUSER", "x", *rules)
    ours = list_line(admin, "x")
    if redis_ref is None:
        pytest.skip("redis-server not installed")
    ref = redis.Redis(port=redis_ref, decode_responses=True)
    ref.execute_command("ACL", "SETUSER", "x", "reset")
    ref.acl_deluser("x")
    ref.execute_command("ACL", "SETUSER", "x", *rules)
    theirs = list_line(ref, "x")
    ref.acl_deluser("x")
    # Redis 7.0 prints "+@read -get" style command rules in a canonical
    # form of its own; the other parts (flags, passwords, keys, channels,
    # selectors' keys) are the same in every version.
    assert ours.split(" -@all")[0].split(" +@all")[0] == theirs.split(" -@all")[0].split(" +@all")[0]


def test_list_and_getuser_shapes(admin, srv):
    admin.execute_command("ACL", "SETUSER", "u1", "on", ">p1", "+get", "~k*", "&ch*", "(+set ~x*)")
    assert list_line(admin, "u1") == (
        "user u1 on #%s ~k* resetchannels &ch* -@all +get (~x* resetchannels -@all +set)"
        % hashlib.sha256(b"p1").hexdigest())
    assert list_line(admin, "default") == "user default on nopass ~* &* +@all"
    c = RespConn(srv.host, srv.port)
    r2 = c.cmd("ACL", "GETUSER", "u1")
    assert r2 == [b"flags", [b"on"], b"passwords", [hashlib.sha256(b"p1").hexdigest().encode()],
                  b"commands", b"-@all +get", b"keys", b"~k*", b"channels", b"&ch*",
                  b"selectors", [[b"commands", b"-@all +set", b"keys", b"~x*", b"channels", b""]]]
    c.cmd("HELLO", "3")
    r3 = dict(c.cmd("ACL", "GETUSER", "u1"))
    assert r3[b"commands"] == b"-@all +get"
    assert r3[b"flags"] == [b"on"]
    assert dict(r3[b"selectors"][0]) == {b"commands": b"-@all +set", b"keys": b"~x*", b"channels": b""}
    assert c.cmd("ACL", "GETUSER", "nosuch") is None
    c.close()
    assert admin.acl_users() == ["default", "u1"]
    assert admin.acl_whoami() == "default"


SETUSER_ERRORS = [
    (["bogus"], "Error in ACL SETUSER modifier 'bogus': Syntax error"),
    (["+nosuch"], "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL"),
    (["+@nosuch"], "Error in ACL SETUSER modifier '+@nosuch': Unknown command or category name in ACL"),
    (["-config|nosuch"], "Error in ACL SETUSER modifier '-config|nosuch': Unknown command or category name in ACL"),
    (["%Z~x"], "Error in ACL SETUSER modifier '%Z~x': Syntax error"),
    (["(+get"], "Unmatched parenthesis in acl selector starting at '(+get'."),
    (["#abc"], "Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 characters and "
               "contain only lowercase hexadecimal characters"),
    (["<nope"], "Error in ACL SETUSER modifier '<nope': The password you are trying to remove from the user "
                "does not exist"),
    (["+config|get|x"], "Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is "
                        "not supported"),
    (["+get|"], "Error in ACL SETUSER modifier '+get|': Syntax error"),
    (["-select|0"], "Error in ACL SETUSER modifier '-select|0': Unknown command or category name in ACL"),
    (["%RR~x"], "Error in ACL SETUSER modifier '%RR~x': Syntax error"),
    (["~a b"], "Error in ACL SETUSER modifier '~a b': Syntax error"),
    (["allkeys", "~x"], "Error in ACL SETUSER modifier '~x': Adding a pattern after the * pattern (or the "
                        "'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with "
                        "an empty list of patterns"),
    (["allchannels", "&x"], "Error in ACL SETUSER modifier '&x': Adding a pattern after the * pattern (or the "
                            "'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to "
                            "start with an empty list of channels"),
]


@pytest.mark.parametrize("rules,text", SETUSER_ERRORS)
def test_setuser_errors(admin, redis_ref, rules, text):
    assert err_of(admin.execute_command, "ACL", "SETUSER", "e", *rules) == text
    # All or nothing: a failed SETUSER creates nothing.
    assert "e" not in admin.acl_users()
    if redis_ref is not None:
        ref = redis.Redis(port=redis_ref, decode_responses=True)
        assert err_of(ref.execute_command, "ACL", "SETUSER", "e", *rules) == text
        ref.acl_deluser("e")


def test_acl_misc_errors(admin, redis_ref):
    cases = [
        ("ACL", "DELUSER", "default"),
        ("ACL", "DRYRUN", "nouser", "get", "a"),
        ("ACL", "GENPASS", "0"),
        ("ACL", "GENPASS", "5000"),
        ("ACL", "NOSUCH"),
        ("ACL", "SAVE"),
        ("ACL", "LOAD"),
        ("ACL", "LOG", "x"),
        ("ACL", "GENPASS", "abc"),
        ("ACL", "CAT", "a", "b"),
        ("ACL", "CAT", "nosuch"),
        ("ACL", "WHOAMI", "extra"),
        ("ACL", "SETUSER", "a b"),
        ("ACL", "DRYRUN", "default", "get"),
        ("ACL", "DRYRUN", "default", "config"),
    ]
    ours = [err_of(admin.execute_command, *c) for c in cases]
    assert ours[0] == "The 'default' user cannot be removed"
    assert ours[1] == "User 'nouser' not found"
    assert all(o is not None for o in ours)
    if redis_ref is not None:
        ref = redis.Redis(port=redis_ref, decode_responses=True)
        assert ours == [err_of(ref.execute_command, *c) for c in cases]
    assert admin.execute_command("ACL", "DELUSER", "nosuch") == 0
    assert len(admin.execute_command("ACL", "GENPASS")) == 64
    assert len(admin.execute_command("ACL", "GENPASS", "5")) == 2
    help_ = admin.execute_command("ACL", "HELP")
    assert len(help_) > 10
    if redis_ref is not None:
        assert help_ == redis.Redis(port=redis_ref, decode_responses=True).execute_command("ACL", "HELP")


def test_acl_cat(admin, redis_ref):
    cats = admin.acl_cat()
    assert cats[:21] == ["keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
                         "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
                         "dangerous", "connection", "transaction", "scripting"]
    assert "get" in admin.acl_cat("read") and "set" not in admin.acl_cat("read")
    assert "set" in admin.acl_cat("write")
    assert "config|set" in admin.acl_cat("dangerous")
    assert "flushall" in admin.acl_cat("dangerous")
    assert err_of(admin.acl_cat, "nosuch") == "Unknown category 'nosuch'"
    if redis_ref is not None:
        ref = redis.Redis(port=redis_ref, decode_responses=True)
        assert ref.acl_cat() == cats[:21]
        have = set(admin.command().keys())
        for cat in ("string", "list", "hash", "fast", "pubsub", "transaction", "write", "read"):
            mine = set(admin.acl_cat(cat))
            theirs = set(ref.acl_cat(cat))
            # Redis 7.0 lacks the 7.2+/8.x commands; of the commands both
            # have, the categories agree.
            assert {x for x in theirs if x.split("|")[0] in have} <= mine, (cat, theirs - mine)


# ---- authentication -------------------------------------------------------

def test_auth_forms(admin, srv):
    admin.execute_command("ACL", "SETUSER", "a", "on", ">pw", "+@all", "~*")
    assert user_conn(srv, "a", "pw").acl_whoami() == "a"
    assert "WRONGPASS invalid username-password pair or user is disabled." in err_of(
        user_conn(srv, "a", "bad").ping)
    admin.execute_command("ACL", "SETUSER", "a", "off")
    assert "WRONGPASS" in err_of(user_conn(srv, "a", "pw").ping)
    admin.execute_command("ACL", "SETUSER", "a", "on", "<pw", "#" + hashlib.sha256(b"h").hexdigest())
    assert user_conn(srv, "a", "h").acl_whoami() == "a"
    admin.execute_command("ACL", "SETUSER", "a", "!" + hashlib.sha256(b"h").hexdigest())
    assert "WRONGPASS" in err_of(user_conn(srv, "a", "h").ping)
    admin.execute_command("ACL", "SETUSER", "a", "nopass")
    assert user_conn(srv, "a", "anything").acl_whoami() == "a"
    admin.execute_command("ACL", "SETUSER", "a", "resetpass")
    assert "WRONGPASS" in err_of(user_conn(srv, "a", "anything").ping)
    c = RespConn(srv.host, srv.port)
    assert raw_err(c, "AUTH", "nosuch", "x") == "WRONGPASS invalid username-password pair or user is disabled."
    admin.execute_command("ACL", "SETUSER", "a", ">pw")
    h = dict(c.cmd("HELLO", "3", "AUTH", "a", "pw"))
    assert h[b"proto"] == 3
    assert c.cmd("ACL", "WHOAMI") == b"a"
    assert c.cmd("CLIENT", "INFO").split(b" user=")[1].startswith(b"a ")
    assert c.cmd("RESET") == "RESET"
    assert c.cmd("ACL", "WHOAMI") == b"default"
    assert str(c.cmd("HELLO", "3", "AUTH", "a", "bad")) == \
        "WRONGPASS invalid username-password pair or user is disabled."
    assert c.cmd("ACL", "WHOAMI") == b"default"
    c.close()


def test_requirepass_is_default_password(new_server):
    s = new_server("--requirepass", "sekret")
    c = RespConn(s.host, s.port)
    assert raw_err(c, "GET", "x").startswith("NOAUTH")
    assert raw_err(c, "AUTH", "nope").startswith("WRONGPASS")
    assert c.cmd("AUTH", "default", "sekret") == "OK"
    line = [x for x in c.cmd("ACL", "LIST") if x.startswith(b"user default")][0].decode()
    assert line == "user default on #%s ~* &* +@all" % hashlib.sha256(b"sekret").hexdigest()
    assert c.cmd("CONFIG", "SET", "requirepass", "") == "OK"
    assert c.cmd("ACL", "LIST")[0] == b"user default on nopass ~* &* +@all"
    c2 = RespConn(s.host, s.port)
    assert c2.cmd("GET", "x") is None
    c.close()
    c2.close()


# ---- the check --------------------------------------------------------------

def test_command_key_channel_denials(admin, srv):
    admin.execute_command("ACL", "SETUSER", "u", "on", ">p", "+get", "+set", "+publish", "+config|get",
                          "%R~r:*", "%W~w:*", "~b:*", "&news.*")
    u = user_conn(srv, "u", "p")
    assert u.set("b:1", "v") and u.get("b:1") == "v"
    assert u.get("r:1") is None
    assert err_of(u.set, "r:1", "v") == "No permissions to access a key"
    assert u.set("w:1", "v")
    assert err_of(u.get, "w:1") == "No permissions to access a key"
    assert err_of(u.get, "zz") == "No permissions to access a key"
    assert err_of(u.execute_command, "INCR", "b:1") == "User u has no permissions to run the 'incr' command"
    assert err_of(u.config_set, "hz", "10") == "User u has no permissions to run the 'config|set' command"
    assert u.config_get("hz") == {"hz": "10"}
    assert u.publish("news.x", "m") == 0
    assert err_of(u.publish, "other", "m") == "No permissions to access a channel"
    # The NOPERM prefix, byte for byte.
    c = RespConn(srv.host, srv.port)
    c.cmd("AUTH", "u", "p")
    r = c.cmd("INCR", "b:1")
    assert isinstance(r, Error) and str(r) == "NOPERM User u has no permissions to run the 'incr' command"
    assert str(c.cmd("GET", "zz")) == "NOPERM No permissions to access a key"
    assert c.cmd("AUTH", "u", "p") == "OK"  # no-auth commands are always allowed
    c.close()
    assert admin.execute_command("ACL", "DRYRUN", "u", "get", "b:1") == "OK"
    assert admin.execute_command("ACL", "DRYRUN", "u", "get", "zz") == \
        "User u has no permissions to access the 'zz' key"
    assert admin.execute_command("ACL", "DRYRUN", "u", "incr", "b:1") == \
        "User u has no permissions to run the 'incr' command"
    assert admin.execute_command("ACL", "DRYRUN", "u", "publish", "x", "m") == \
        "User u has no permissions to access the 'x' channel"
    assert err_of(admin.execute_command, "ACL", "DRYRUN", "u", "nocmd") == "Command 'nocmd' not found"


def test_first_args(admin, srv):
    admin.execute_command("ACL", "SETUSER", "f", "on", ">p", "~*", "-@all", "+select|0", "+get")
    c = RespConn(srv.host, srv.port)
    c.cmd("AUTH", "f", "p")
    assert c.cmd("SELECT", "0") == "OK"
    assert str(c.cmd("SELECT", "1")) == "NOPERM User f has no permissions to run the 'select' command"
    assert list_line(admin, "f").endswith("-@all +select|0 +get")
    # Allowing the whole command drops its first-arg rules.
    admin.execute_command("ACL", "SETUSER", "f", "+select", "-select")
    assert str(c.cmd("SELECT", "0")).startswith("NOPERM")
    c.close()


def test_categories_and_selectors(admin, srv):
    admin.execute_command("ACL", "SETUSER", "c", "on", ">p", "~*", "+@all", "-@write", "-@dangerous")
    u = user_conn(srv, "c", "p")
    assert u.get("a") is None
    assert "no permissions to run the 'set' command" in err_of(u.set, "a", "1")
    assert "flushall" in err_of(u.flushall)
    admin.execute_command("ACL", "SETUSER", "s", "on", ">p", "resetkeys", "-@all", "(+set ~w:*)", "(+get ~r:*)")
    s = user_conn(srv, "s", "p")
    assert s.set("w:1", "v")
    assert s.get("r:1") is None
    assert err_of(s.get, "w:1") == "No permissions to access a key"
    assert err_of(s.ping) == "User s has no permissions to run the 'ping' command"
    # A multi-key command: every key must be allowed by one selector.
    admin.execute_command("ACL", "SETUSER", "s", "(+mget ~r:* ~w:*)")
    assert s.mget("r:1", "w:1") == [None, "v"]
    # Changing the user applies to its live connections at once.
    admin.execute_command("ACL", "SETUSER", "s", "clearselectors", "+ping")
    assert s.ping()
    assert "'set' command" in err_of(s.set, "w:1", "v")


def test_multi_queue_and_exec_checks(admin, srv):
    admin.execute_command("ACL", "SETUSER", "m", "on", ">p", "~k*", "+multi", "+exec", "+get", "+set", "+discard")
    c = RespConn(srv.host, srv.port)
    c.cmd("AUTH", "m", "p")
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "k1", "v") == "QUEUED"
    assert str(c.cmd("GET", "zz")) == "NOPERM No permissions to access a key"
    assert str(c.cmd("EXEC")).startswith("EXECABORT")
    # Allowed at queue time, refused at EXEC after a change.
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "k1", "v") == "QUEUED"
    assert c.cmd("GET", "k1") == "QUEUED"
    admin.execute_command("ACL", "SETUSER", "m", "-set")
    res = c.cmd("EXEC")
    assert str(res[0]) == ("NOPERM ACLs rules changed between the moment the transaction was accumulated and the "
                           "EXEC call. This command is no longer allowed for the following reason: User m has no "
                           "permissions to run the 'set' command")
    assert res[1] is None
    c.close()
    log = admin.acl_log()
    assert log[0]["context"] == "multi" and log[0]["object"] == "set"


def test_scripts_and_functions(admin, srv):
    admin.execute_command("ACL", "SETUSER", "l", "on", ">p", "~k*", "+eval", "+get", "+fcall", "+function|load")
    u = user_conn(srv, "l", "p")
    e = err_of(u.eval, "return redis.call('set','k','v')", 0)
    assert e.startswith("ACL failure in script: User l has no permissions to run the 'set' command")
    e = err_of(u.eval, "return redis.call('get','zz')", 0)
    assert e.startswith("ACL failure in script: No permissions to access a key")
    assert u.eval("return redis.pcall('get','k')", 0) is None
    assert u.eval("return redis.acl_check_cmd('get','k')", 0) == 1
    assert u.eval("return redis.acl_check_cmd('get','zz')", 0) is None
    assert u.eval("return redis.acl_check_cmd('set','k','v')", 0) is None
    assert "Invalid command passed to redis.acl_check_cmd()" in err_of(
        u.eval, "return redis.acl_check_cmd('nosuch')", 0)
    assert admin.eval("return redis.acl_check_cmd('set','zz','v')", 0) == 1
    assert err_of(u.execute_command, "EVALSHA", "0" * 40, 0) == \
        "User l has no permissions to run the 'evalsha' command"
    u.function_load("#!lua name=acllib\nredis.register_function('f', function(k) return redis.call('set', k[1], 'v') end)",
                    replace=True)
    e = err_of(u.fcall, "f", 1, "k1")
    assert e.startswith("ACL failure in script: User l has no permissions to run the 'set' command")
    log = admin.acl_log()
    assert log[0]["context"] == "lua" and log[0]["reason"] == "command"
    admin.function_flush()


def test_pubsub_channels_and_kill(admin, srv):
    admin.execute_command("ACL", "SETUSER", "p", "on", ">p", "resetchannels", "&news.*", "&lit?",
                          "+subscribe", "+psubscribe", "+publish", "+ping")
    c = RespConn(srv.host, srv.port)
    c.cmd("AUTH", "p", "p")
    assert str(c.cmd("SUBSCRIBE", "other")) == "NOPERM No permissions to access a channel"
    assert str(c.cmd("PSUBSCRIBE", "news.x*")) == "NOPERM No permissions to access a channel"
    assert c.cmd("PSUBSCRIBE", "lit?") == [b"psubscribe", b"lit?", 1]
    assert c.cmd("SUBSCRIBE", "news.a") == [b"subscribe", b"news.a", 2]
    s = RespConn(srv.host, srv.port)
    s.cmd("AUTH", "p", "p")
    admin.execute_command("ACL", "SETUSER", "p", "+ssubscribe", "+spublish")
    assert str(s.cmd("SPUBLISH", "other", "m")) == "NOPERM No permissions to access a channel"
    assert str(s.cmd("SSUBSCRIBE", "news.b", "other")) == "NOPERM No permissions to access a channel"
    assert s.cmd("SPUBLISH", "news.b", "m") == 0
    s.close()
    # Widening keeps the connection; losing a subscribed channel closes it.
    admin.execute_command("ACL", "SETUSER", "p", "&more")
    assert c.cmd("PING") == [b"pong", b""]
    admin.execute_command("ACL", "SETUSER", "p", "resetchannels", "&lit?")
    deadline = time.time() + 5
    closed = False
    while time.time() < deadline and not closed:
        try:
            r = c.cmd("PING")
            closed = r is None
        except Exception:
            closed = True
        time.sleep(0.05)
    assert closed
    log = admin.acl_log()
    assert any(e["reason"] == "channel" and e["object"] == "news.x*" for e in log)


def test_deluser_disconnects(admin, srv):
    admin.execute_command("ACL", "SETUSER", "d", "on", ">p", "+@all", "~*")
    u = RespConn(srv.host, srv.port)
    assert u.cmd("AUTH", "d", "p") == "OK"
    keep = RespConn(srv.host, srv.port)
    assert admin.execute_command("ACL", "DELUSER", "d", "nosuch") == 1
    assert wait_closed(u)
    assert keep.cmd("PING") == "PONG"
    keep.close()
    # SETUSER off keeps the live connection (as Redis): only new AUTHs fail.
    admin.execute_command("ACL", "SETUSER", "o", "on", ">p", "+@all", "~*")
    o = RespConn(srv.host, srv.port)
    assert o.cmd("AUTH", "o", "p") == "OK"
    admin.execute_command("ACL", "SETUSER", "o", "off")
    assert o.cmd("PING") == "PONG"
    assert str(o.cmd("AUTH", "o", "p")).startswith("WRONGPASS")
    o.close()


def test_client_kill_user(admin, srv):
    admin.execute_command("ACL", "SETUSER", "k", "on", ">p", "+@all", "~*")
    u = RespConn(srv.host, srv.port)
    u.cmd("AUTH", "k", "p")
    assert admin.execute_command("CLIENT", "KILL", "USER", "k") == 1
    assert err_of(admin.execute_command, "CLIENT", "KILL", "USER", "nosuch") == "No such user 'nosuch'"
    u.close()


def test_acl_log(admin, srv):
    admin.execute_command("ACL", "SETUSER", "g", "on", ">p", "+get", "~a*")
    u = user_conn(srv, "g", "p")
    for _ in range(3):
        err_of(u.get, "zz")
    err_of(u.set, "a", "1")
    err_of(user_conn(srv, "g", "bad").ping)
    log = admin.acl_log()
    assert [e["reason"] for e in log[:3]] == ["auth", "command", "key"]
    key = log[2]
    assert key["count"] == 3 and key["object"] == "zz" and key["username"] == "g" and key["context"] == "toplevel"
    assert set(key) == {"count", "reason", "context", "object", "username", "age-seconds", "client-info",
                        "entry-id", "timestamp-created", "timestamp-last-updated"}
    assert key["client-info"]["user"] == "g" and key["client-info"]["cmd"] == "get"
    assert log[0]["object"] == "auth" and log[0]["username"] == "g"
    info = admin.info("stats")
    assert info["acl_access_denied_key"] >= 3 and info["acl_access_denied_cmd"] >= 1
    assert info["acl_access_denied_auth"] >= 1 and "acl_access_denied_channel" in info
    assert len(admin.acl_log(1)) == 1
    admin.config_set("acllog-max-len", 2)
    assert len(admin.acl_log()) == 2
    admin.config_set("acllog-max-len", 128)
    assert admin.acl_log_reset()
    assert admin.acl_log() == []
    assert admin.execute_command("ACL", "LOG", "-1") == []


def test_setuser_redacted_in_slowlog(admin, redis_ref):
    admin.config_set("slowlog-log-slower-than", 0)
    try:
        admin.slowlog_reset()
        admin.execute_command("ACL", "SETUSER", "red", "on", ">secret")
        entries = admin.slowlog_get(10)
    finally:
        admin.config_set("slowlog-log-slower-than", 10000)
    cmds = [e["command"].decode() if isinstance(e["command"], bytes) else e["command"] for e in entries]
    assert "acl setuser (redacted) (redacted) (redacted)" in [c.lower() for c in cmds], cmds


def test_acl_pubsub_default(admin, srv):
    assert admin.config_get("acl-pubsub-default") == {"acl-pubsub-default": "resetchannels"}
    admin.config_set("acl-pubsub-default", "allchannels")
    try:
        admin.execute_command("ACL", "SETUSER", "ch", "on")
        assert list_line(admin, "ch") == "user ch on &* -@all"
    finally:
        admin.config_set("acl-pubsub-default", "resetchannels")
    admin.execute_command("ACL", "SETUSER", "ch2", "on")
    assert list_line(admin, "ch2") == "user ch2 on resetchannels -@all"


# ---- ACL file and config-file users ---------------------------------------

def test_aclfile_save_and_load(new_server, tmp_path):
    path = str(tmp_path / "users.acl")
    with open(path, "w") as f:
        f.write("user alice on >apw ~a:* +get\n# a comment\n\nuser default on nopass ~* &* +@all\n")
    s = new_server("--aclfile", path)
    c = redis.Redis(host=s.host, port=s.port, decode_responses=True)
    assert c.acl_users() == ["alice", "default"]
    a = RespConn(s.host, s.port)
    assert a.cmd("AUTH", "alice", "apw") == "OK"
    assert a.cmd("GET", "a:1") is None
    c.execute_command("ACL", "SETUSER", "bob", "on", ">bpw", "+@all", "~*", "(+get ~x)")
    assert c.execute_command("ACL", "SAVE") == "OK"
    text = open(path).read().splitlines()
    assert text[1] == "user bob on #%s ~* resetchannels +@all (~x resetchannels -@all +get)" % \
        hashlib.sha256(b"bpw").hexdigest()
    # LOAD: a bad file changes nothing.
    with open(path, "a") as f:
        f.write("user carol on +nosuch\nbogus line\n")
    e = err_of(c.execute_command, "ACL", "LOAD")
    assert e == ("%s:4: Unknown command or category name in ACL. %s:5 should start with user keyword. "
                 "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
                 % (path, path))
    assert c.acl_users() == ["alice", "bob", "default"]
    with open(path, "w") as f:
        f.write("user bob on >new ~* +@all\n")
    assert c.execute_command("ACL", "LOAD") == "OK"
    assert c.acl_users() == ["bob", "default"]
    # alice was deleted: her connection is closed.
    assert wait_closed(a)
    assert list_line(c, "default") == "user default on nopass ~* &* +@all"


def test_config_file_user_lines(new_server, tmp_path):
    conf = tmp_path / "hk.conf"
    conf.write_text('user worker on >wpw ~jobs:* +@list "(+get ~cfg:*)"\nacllog-max-len 7\n')
    from conftest import free_port
    s = new_server("--include", str(conf))
    c = redis.Redis(host=s.host, port=s.port, decode_responses=True)
    assert "worker" in c.acl_users()
    assert c.config_get("acllog-max-len") == {"acllog-max-len": "7"}
    w = redis.Redis(host=s.host, port=s.port, username="worker", password="wpw", decode_responses=True)
    assert w.lpush("jobs:1", "x") == 1
    assert w.get("cfg:a") is None
    assert err_of(w.get, "jobs:1") == "No permissions to access a key"


def _conf_server(binary, conf):
    """A server started with conf as its configuration file (CONFIG REWRITE
    rewrites that one), on a free port: (process, client)."""
    import subprocess
    from conftest import free_port
    port = free_port()
    p = subprocess.Popen([binary, str(conf), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                          "--threads", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while True:
        try:
            c = redis.Redis(port=port, decode_responses=True)
            c.ping()
            return p, c
        except redis.exceptions.ConnectionError:
            assert p.poll() is None and time.time() < deadline
            time.sleep(0.05)


def _conf_server_stop(p, c):
    try:
        c.shutdown(nosave=True)
    except redis.exceptions.ConnectionError:
        pass
    p.wait(timeout=20)


def test_config_rewrite_writes_users(request, tmp_path):
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    binary = request.config.getoption("--server-bin")
    conf = tmp_path / "hk.conf"
    conf.write_text("# users\nuser old on nopass +@all ~*\nhz 10\n")
    p, c = _conf_server(binary, conf)
    try:
        c.execute_command("ACL", "SETUSER", "new", "on", ">pw", "~k*", "+get")
        c.acl_deluser("old")
        assert c.config_rewrite()
    finally:
        _conf_server_stop(p, c)
    lines = conf.read_text().splitlines()
    assert not any(line.startswith("user old") for line in lines)
    assert "user new on #%s ~k* resetchannels -@all +get" % hashlib.sha256(b"pw").hexdigest() in lines
    assert "user default on nopass ~* &* +@all" in lines
    assert lines[0] == "# users" and "hz 10" in lines
    # The rewritten file loads with the same users.
    p, c = _conf_server(binary, conf)
    try:
        assert c.acl_users() == ["default", "new"]
    finally:
        _conf_server_stop(p, c)


def test_config_user_and_aclfile_conflict(request, tmp_path):
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    conf = tmp_path / "hk.conf"
    acl = tmp_path / "u.acl"
    acl.write_text("")
    conf.write_text("user x on\naclfile %s\n" % acl)
    import subprocess
    p = subprocess.run([request.config.getoption("--server-bin"), str(conf), "--port", "0"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode != 0
    assert "ACL file path is invalid" in p.stderr


# ---- concurrency ------------------------------------------------------------

def test_users_changed_under_load(admin, srv):
    """Clients of one user hammer GET/SET on several server threads while
    another client flips that user's rules: every reply is either the
    command's or the NOPERM error of the rule in force, the server keeps
    serving, and the final rules hold exactly."""
    admin.execute_command("ACL", "SETUSER", "load", "on", ">p", "~*", "+@all")
    stop = threading.Event()
    errors = []
    counts = {"ok": 0, "denied": 0}
    lock = threading.Lock()

    def worker(i):
        c = user_conn(srv, "load", "p")
        ok = denied = 0
        while not stop.is_set():
            try:
                c.set("k%d" % i, "v")
                assert c.get("k%d" % i) == "v"
                ok += 1
            except redis.exceptions.NoPermissionError as e:
                if "no permissions to run the 'set' command" not in str(e) and \
                        "no permissions to run the 'get' command" not in str(e):
                    errors.append(str(e))
                denied += 1
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))
                return
        with lock:
            counts["ok"] += ok
            counts["denied"] += denied
        c.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    end = time.time() + 2.0
    flip = 0
    while time.time() < end:
        admin.execute_command("ACL", "SETUSER", "load", "-set" if flip % 2 == 0 else "+set")
        admin.execute_command("ACL", "SETUSER", "other%d" % (flip % 4), "on", "+get")
        flip += 1
    admin.execute_command("ACL", "SETUSER", "load", "-get")
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors[:5]
    assert counts["ok"] > 0 and flip > 10
    c = user_conn(srv, "load", "p")
    assert "'get' command" in err_of(c.get, "k0")
    assert admin.ping()
