"""TLS: the tls-port beside the plain port, client certificates
(tls-auth-clients yes/no/optional), the refused cases, pipelining and big
values, certificate reload with CONFIG SET, the tls-* settings against
Redis's, and garbage on the TLS port.

Certificates are made at test time with the openssl command line."""
import os
import random
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time

import pytest
import redis

from conftest import free_port, start_server, stop_checked
from resp import Error, RespConn

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")


def sh(*args, cwd):
    subprocess.run(args, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_ca(d, name):
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".crt",
       "-days", "30", "-subj", "/CN=" + name, cwd=d)


def make_cert(d, ca, name, cn, server=False, days="30"):
    sh("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
       "-subj", "/CN=" + cn, cwd=d)
    ext = os.path.join(d, name + ".ext")
    with open(ext, "w") as f:
        if server:
            f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        else:
            f.write("extendedKeyUsage=clientAuth\n")
    sh("openssl", "x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
       "-CAcreateserial", "-out", name + ".crt", "-days", days, "-extfile", ext, cwd=d)


def make_expired(d, ca, name):
    """A client certificate whose validity ended in 2021 (openssl ca can
    set past dates)."""
    sh("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
       "-subj", "/CN=expired", cwd=d)
    db = os.path.join(d, "cadb")
    os.makedirs(db, exist_ok=True)
    open(os.path.join(db, "index.txt"), "w").close()
    with open(os.path.join(db, "serial"), "w") as f:
        f.write("1000\n")
    conf = os.path.join(d, "ca.cnf")
    with open(conf, "w") as f:
        f.write("[ca]\ndefault_ca=c\n[c]\ndatabase=%s/index.txt\nserial=%s/serial\nnew_certs_dir=%s\n"
                "default_md=sha256\npolicy=p\nunique_subject=no\n[p]\ncommonName=supplied\n" % (db, db, db))
    sh("openssl", "ca", "-batch", "-config", conf, "-cert", ca + ".crt", "-keyfile", ca + ".key", "-in",
       name + ".csr", "-out", name + ".crt", "-startdate", "20200101000000Z", "-enddate", "20210101000000Z",
       "-notext", cwd=d)


@pytest.fixture(scope="module")
def certs():
    d = tempfile.mkdtemp(prefix="hotkv-tls-")
    make_ca(d, "ca")
    make_ca(d, "other")
    make_cert(d, "ca", "server", "localhost", server=True)
    make_cert(d, "ca", "server2", "localhost", server=True)
    make_cert(d, "ca", "client", "client")
    make_cert(d, "other", "stranger", "stranger")
    make_cert(d, "other", "otherserver", "localhost", server=True)
    make_expired(d, "ca", "expired")
    # The server key again, encrypted with a passphrase.
    sh("openssl", "pkey", "-in", "server.key", "-out", "server-enc.key", "-aes256", "-passout", "pass:sekrit", cwd=d)
    with open(os.path.join(d, "garbage.crt"), "w") as f:
        f.write("-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n")
    yield {k: os.path.join(d, k) for k in os.listdir(d)} | {"dir": d}
    shutil.rmtree(d, ignore_errors=True)


def tls_args(c, port, *extra, auth="no"):
    return ("--tls-port", str(port), "--tls-cert-file", c["server.crt"], "--tls-key-file", c["server.key"],
            "--tls-ca-cert-file", c["ca.crt"], "--tls-auth-clients", auth) + extra


@pytest.fixture
def tls_server(request, certs):
    """Start a HotKV with a TLS port; returns (server, tls_port)."""
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    started = []

    def make(*extra, auth="no", threads=2):
        port = free_port()
        srv = start_server(request.config.getoption("--server-bin"), *tls_args(certs, port, *extra, auth=auth),
                           threads=threads)
        started.append(srv)
        wait_port(port)
        return srv, port

    yield make
    for srv in started:
        stop_checked(srv)


def wait_port(port, deadline=20):
    end = time.time() + deadline
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.time() > end:
                raise
            time.sleep(0.05)


def client_ctx(c, cert=None, ca="ca.crt"):
    ctx = ssl.create_default_context(cafile=c[ca])
    if cert:
        ctx.load_cert_chain(c[cert + ".crt"], c[cert + ".key"])
    return ctx


def tls_sock(c, port, cert=None, ca="ca.crt", timeout=10):
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        return client_ctx(c, cert, ca).wrap_socket(raw, server_hostname="localhost")
    except Exception:
        raw.close()
        raise


def resp_over(sock):
    rc = RespConn.__new__(RespConn)
    rc.sock = sock
    rc.buf = b""
    return rc


def tls_conn(c, port, cert=None, ca="ca.crt"):
    return resp_over(tls_sock(c, port, cert, ca))


def refused(c, port, cert=None, ca="ca.crt"):
    """True when a TLS client with this certificate cannot run a command
    (the handshake fails on either side, or the server drops it)."""
    try:
        rc = tls_conn(c, port, cert, ca)
    except (ssl.SSLError, OSError):
        return True
    try:
        # TLS 1.3: the server checks the client's certificate after the
        # client considers the handshake done; the refusal shows here.
        return rc.cmd("PING") != "PONG"
    except (ssl.SSLError, OSError, ConnectionError):
        return True
    finally:
        rc.close()


def py_client(c, port, cert=None, **kw):
    kw.setdefault("socket_timeout", 20)
    args = dict(host="localhost", port=port, ssl=True, ssl_ca_certs=c["ca.crt"], **kw)
    if cert:
        args.update(ssl_certfile=c[cert + ".crt"], ssl_keyfile=c[cert + ".key"])
    return redis.Redis(**args)


# ---- basic use -------------------------------------------------------------------


def test_redis_py_over_tls(tls_server, certs):
    srv, port = tls_server()
    r = py_client(certs, port)
    assert r.ping()
    assert r.set("k", "v")
    assert r.get("k") == b"v"
    assert r.incr("n") == 1
    assert r.lpush("l", *range(100)) == 100
    assert r.lrange("l", 0, 2) == [b"99", b"98", b"97"]
    assert r.hset("h", mapping={"a": 1, "b": 2}) == 2
    assert r.hgetall("h") == {b"a": b"1", b"b": b"2"}
    # The same data on the plain port.
    assert srv.client().get("k") == b"v"
    r.close()


def test_resp3_and_pubsub_over_tls(tls_server, certs):
    srv, port = tls_server()
    sub = tls_conn(certs, port)
    hello = sub.cmd("HELLO", "3")
    assert not isinstance(hello, Exception)
    assert sub.cmd("SUBSCRIBE", "ch")[0] in (b"subscribe", "subscribe")
    # Published from the plain port, delivered over TLS.
    assert srv.client().publish("ch", "hi") == 1
    msg = sub.read()
    assert list(msg) == [b"message", b"ch", b"hi"]
    sub.close()


def test_redis_cli_over_tls(tls_server, certs):
    if not shutil.which("redis-cli"):
        pytest.skip("redis-cli not installed")
    srv, port = tls_server(auth="yes")
    base = ["redis-cli", "-p", str(port), "--tls", "--cacert", certs["ca.crt"], "--cert", certs["client.crt"],
            "--key", certs["client.key"]]
    out = subprocess.run(base + ["SET", "clikey", "hello"], capture_output=True, text=True, timeout=20)
    assert out.stdout.strip() == "OK"
    out = subprocess.run(base + ["GET", "clikey"], capture_output=True, text=True, timeout=20)
    assert out.stdout.strip() == "hello"
    # Without a client certificate the server refuses it.
    out = subprocess.run(base[:6] + ["PING"], capture_output=True, text=True, timeout=20)
    assert "PONG" not in out.stdout


def test_redis_benchmark_over_tls(tls_server, certs):
    if not shutil.which("redis-benchmark"):
        pytest.skip("redis-benchmark not installed")
    srv, port = tls_server()
    out = subprocess.run(["redis-benchmark", "-p", str(port), "--tls", "--cacert", certs["ca.crt"], "-t", "set,get",
                          "-n", "2000", "-c", "10", "-P", "8", "-q"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "SET:" in out.stdout and "GET:" in out.stdout
    assert srv.client().dbsize() > 0


# ---- client certificates ---------------------------------------------------------


def test_auth_clients_yes(tls_server, certs):
    srv, port = tls_server(auth="yes")
    assert refused(certs, port)  # no certificate
    assert refused(certs, port, cert="stranger")  # another CA's
    assert refused(certs, port, cert="expired")
    rc = tls_conn(certs, port, cert="client")
    assert rc.cmd("PING") == "PONG"
    rc.close()
    assert srv.client().ping()


def test_auth_clients_optional(tls_server, certs):
    srv, port = tls_server(auth="optional")
    rc = tls_conn(certs, port)
    assert rc.cmd("PING") == "PONG"
    rc.close()
    rc = tls_conn(certs, port, cert="client")
    assert rc.cmd("PING") == "PONG"
    rc.close()
    # A certificate that is offered must be valid.
    assert refused(certs, port, cert="stranger")
    assert refused(certs, port, cert="expired")


def test_auth_clients_no(tls_server, certs):
    srv, port = tls_server(auth="no")
    for cert in (None, "client", "stranger"):
        rc = tls_conn(certs, port, cert=cert)
        assert rc.cmd("PING") == "PONG"
        rc.close()


def test_client_refuses_server_of_another_ca(tls_server, certs):
    srv, port = tls_server()
    with pytest.raises(ssl.SSLCertVerificationError):
        tls_sock(certs, port, ca="other.crt")


def test_auth_clients_change_at_run_time(tls_server, certs):
    srv, port = tls_server(auth="no")
    r = srv.client()
    assert not refused(certs, port)
    assert r.config_set("tls-auth-clients", "yes")
    assert refused(certs, port)
    assert not refused(certs, port, cert="client")
    assert r.config_get("tls-auth-clients") == {"tls-auth-clients": "yes"}


def test_plaintext_to_tls_port(tls_server, certs):
    srv, port = tls_server()
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"*1\r\n$4\r\nPING\r\n")
    data = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, socket.timeout):
        pass
    s.close()
    assert b"PONG" not in data
    assert srv.client().ping()
    assert not refused(certs, port)


def test_plaintext_to_tls_port_like_redis(certs):
    """Redis closes a plaintext client on its TLS port without a reply;
    HotKV's behaviour is checked above, this checks the reference."""
    if not shutil.which("redis-server"):
        pytest.skip("redis-server not installed")
    port, tport = free_port(), free_port()
    d = tempfile.mkdtemp()
    p = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--dir", d,
                          *tls_args(certs, tport)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(tport)
        s = socket.create_connection(("127.0.0.1", tport), timeout=10)
        s.sendall(b"*1\r\n$4\r\nPING\r\n")
        try:
            data = s.recv(4096)
        except ConnectionResetError:
            data = b""
        s.close()
        assert b"PONG" not in data
    finally:
        p.terminate()
        p.wait(20)
        shutil.rmtree(d, ignore_errors=True)


# ---- pipelining and big values ---------------------------------------------------


def test_pipeline_over_tls(tls_server, certs):
    srv, port = tls_server()
    rc = tls_conn(certs, port)
    n = 5000
    buf = b"".join(b"*3\r\n$3\r\nSET\r\n$%d\r\nkey:%d\r\n$%d\r\nval:%d\r\n" % (len(b"key:%d" % i), i,
                                                                             len(b"val:%d" % i), i)
                   for i in range(n))
    buf += b"".join(b"*2\r\n$3\r\nGET\r\n$%d\r\nkey:%d\r\n" % (len(b"key:%d" % i), i) for i in range(n))
    rc.send(buf)
    for i in range(n):
        assert rc.read() == "OK"
    for i in range(n):
        assert rc.read() == b"val:%d" % i
    rc.close()
    r = py_client(certs, port)
    p = r.pipeline(transaction=False)
    for i in range(2000):
        p.incr("ctr")
    assert p.execute()[-1] == 2000


def test_big_values_over_tls(tls_server, certs):
    srv, port = tls_server()
    r = py_client(certs, port, socket_timeout=60)
    big = os.urandom(10 * 1024 * 1024)
    assert r.set("big", big)
    assert r.strlen("big") == len(big)
    assert r.get("big") == big
    # Several big replies pipelined, read slowly: partial writes.
    rc = tls_conn(certs, port)
    rc.send(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n" * 3)
    time.sleep(0.5)
    for _ in range(3):
        assert rc.read() == big
    rc.close()
    assert srv.client().strlen("big") == len(big)


def test_many_tls_clients_at_once(tls_server, certs):
    srv, port = tls_server(threads=2)
    errors = []

    def work(i):
        try:
            r = py_client(certs, port)
            for j in range(50):
                r.incr("counter")
                assert r.set("k%d" % i, j)
            r.close()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert int(srv.client().get("counter")) == 16 * 50


# ---- plain and TLS side by side ----------------------------------------------------


def test_side_by_side_and_client_list(tls_server, certs):
    srv, port = tls_server()
    plain = srv.client()
    t = py_client(certs, port)
    plain.set("shared", "1")
    assert t.incr("shared") == 2
    assert plain.get("shared") == b"2"
    lports = {int(c["laddr"].rsplit(":", 1)[1]) for c in plain.client_list()}
    assert port in lports and srv.port in lports


def test_tls_only_with_port_zero(request, certs):
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    tport = free_port()
    srv = start_server(request.config.getoption("--server-bin"), *tls_args(certs, tport), "--port", "0",
                       wait=False)
    try:
        wait_port(tport)
        r = py_client(certs, tport)
        assert r.ping()
        assert r.config_get("port") == {"port": "0"}
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", srv.port), timeout=2).close()
    finally:
        stop_checked(srv)


def test_tls_port_set_at_run_time(request, certs):
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    srv = start_server(request.config.getoption("--server-bin"), "--tls-cert-file", certs["server.crt"],
                       "--tls-key-file", certs["server.key"], "--tls-auth-clients", "no")
    try:
        r = srv.client()
        assert r.config_get("tls-port") == {"tls-port": "0"}
        tport = free_port()
        assert r.config_set("tls-port", tport)
        assert py_client(certs, tport).ping()
        # Turned off again: the TLS listener closes, the plain port stays.
        assert r.config_set("tls-port", 0)
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", tport), timeout=2).close()
        assert r.ping()
        # A port someone holds: the error, and the setting stays.
        with pytest.raises(redis.ResponseError) as e:
            r.config_set("tls-port", srv.port)
        assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'tls-port') - Unable to listen on "
                                "this port. Check server logs.")
        assert r.config_get("tls-port") == {"tls-port": "0"}
    finally:
        stop_checked(srv)


# ---- certificate reload -------------------------------------------------------------


def peer_cert(c, port):
    s = tls_sock(c, port)
    der = s.getpeercert(binary_form=True)
    s.close()
    return der


def pem_der(path):
    out = subprocess.run(["openssl", "x509", "-in", path, "-outform", "DER"], capture_output=True, check=True)
    return out.stdout


def test_certificate_reload(tls_server, certs):
    srv, port = tls_server()
    r = srv.client()
    assert peer_cert(certs, port) == pem_der(certs["server.crt"])
    old = tls_conn(certs, port)
    assert old.cmd("SET", "a", "1") == "OK"
    assert r.config_set("tls-cert-file", certs["server2.crt"], "tls-key-file", certs["server2.key"]) is True
    assert peer_cert(certs, port) == pem_der(certs["server2.crt"])
    # A connection made before keeps working.
    assert old.cmd("GET", "a") == b"1"
    old.close()
    assert r.config_get("tls-cert-file") == {"tls-cert-file": certs["server2.crt"]}


def test_bad_certificate_keeps_the_old_context(tls_server, certs):
    srv, port = tls_server()
    r = srv.client()
    msg = "Unable to update TLS configuration. Check server logs."
    cases = [("tls-cert-file", certs["garbage.crt"]), ("tls-cert-file", "/nonexistent/cert.pem"),
             ("tls-cert-file", certs["server2.crt"]),  # its key does not match server.key
             ("tls-ca-cert-file", "/nonexistent/ca.pem"), ("tls-protocols", "TLSv9"),
             ("tls-ciphers", "NO-SUCH-CIPHER"), ("tls-ciphersuites", "NO_SUCH_SUITE"),
             ("tls-dh-params-file", "/nonexistent/dh.pem"), ("tls-key-file", certs["server-enc.key"])]
    for name, value in cases:
        before = r.config_get(name)[name]
        with pytest.raises(redis.ResponseError) as e:
            r.config_set(name, value)
        assert str(e.value) == "CONFIG SET failed (possibly related to argument '%s') - %s" % (name, msg), name
        assert r.config_get(name) == {name: before}
    # One bad value among good ones: nothing changes.
    with pytest.raises(redis.ResponseError):
        r.execute_command("CONFIG", "SET", "tls-key-file", certs["server2.key"], "tls-cert-file",
                          certs["garbage.crt"])
    assert r.config_get("tls-key-file") == {"tls-key-file": certs["server.key"]}
    assert peer_cert(certs, port) == pem_der(certs["server.crt"])
    assert srv.alive()
    assert "Failed to load certificate" in srv.log()


def test_error_texts_match_redis(request, certs):
    """CONFIG SET of tls-* settings answers as Redis 7 with TLS does."""
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    if not shutil.which("redis-server"):
        pytest.skip("redis-server not installed")
    port, tport = free_port(), free_port()
    d = tempfile.mkdtemp()
    p = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--dir", d, *tls_args(certs, tport)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        ref = redis.Redis(port=port)
        got = []
        for name, value in [("tls-cert-file", certs["garbage.crt"]), ("tls-protocols", "TLSv9"),
                            ("tls-auth-clients", "maybe"), ("tls-session-cache-size", "-1"),
                            ("tls-session-caching", "perhaps"), ("tls-port", "70000")]:
            try:
                ref.config_set(name, value)
                got.append((name, "OK"))
            except redis.ResponseError as e:
                got.append((name, str(e)))
        ref_defaults = ref.config_get("tls-*")
    finally:
        p.terminate()
        p.wait(20)
        shutil.rmtree(d, ignore_errors=True)
    return_vals = got
    hport = free_port()
    srv = start_server(request.config.getoption("--server-bin"), *tls_args(certs, hport))
    try:
        r = srv.client()
        mine = []
        for name, value in [(n, v) for n, v in [("tls-cert-file", certs["garbage.crt"]), ("tls-protocols", "TLSv9"),
                                                ("tls-auth-clients", "maybe"), ("tls-session-cache-size", "-1"),
                                                ("tls-session-caching", "perhaps"), ("tls-port", "70000")]]:
            try:
                r.config_set(name, value)
                mine.append((name, "OK"))
            except redis.ResponseError as e:
                mine.append((name, str(e)))
        assert mine == return_vals
        # Every tls-* setting Redis has that HotKV builds, same values
        # (tls-cluster and tls-replication belong to features not built).
        defaults = r.config_get("tls-*")
        for name, value in ref_defaults.items():
            if name in ("tls-cluster", "tls-replication", "tls-port"):
                continue
            assert defaults.get(name) == value, name
        assert "tls-cluster" not in defaults and "tls-replication" not in defaults
    finally:
        stop_checked(srv)


def test_defaults_without_tls(server, r):
    want = {"tls-port": "0", "tls-cert-file": "", "tls-key-file": "", "tls-key-file-pass": "",
            "tls-client-cert-file": "", "tls-client-key-file": "", "tls-client-key-file-pass": "",
            "tls-ca-cert-file": "", "tls-ca-cert-dir": "", "tls-auth-clients": "yes", "tls-protocols": "",
            "tls-ciphers": "", "tls-ciphersuites": "", "tls-prefer-server-ciphers": "no",
            "tls-session-caching": "yes", "tls-session-cache-size": "20480", "tls-session-cache-timeout": "300",
            "tls-dh-params-file": ""}
    got = r.config_get("tls-*")
    for k, v in want.items():
        assert got.get(k) == v, k


def test_settings_apply(tls_server, certs):
    srv, port = tls_server("--tls-key-file", certs["server-enc.key"], "--tls-key-file-pass", "sekrit")
    r = srv.client()
    assert not refused(certs, port)
    with pytest.raises(redis.ResponseError):
        r.config_set("tls-key-file-pass", "wrong")
    assert r.config_get("tls-key-file-pass") == {"tls-key-file-pass": "sekrit"}
    # Only TLS 1.2: a client that insists on 1.3 is refused.
    assert r.config_set("tls-protocols", "TLSv1.2")
    ctx = client_ctx(certs)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    with pytest.raises(ssl.SSLError):
        ctx.wrap_socket(raw, server_hostname="localhost")
    raw.close()
    s = tls_sock(certs, port)
    assert s.version() == "TLSv1.2"
    s.close()
    assert r.config_set("tls-protocols", "tlsv1.2 TLSv1.3")
    s = tls_sock(certs, port)
    assert s.version() == "TLSv1.3"
    s.close()
    assert r.config_set("tls-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256")
    s = tls_sock(certs, port)
    assert s.cipher()[0] == "TLS_CHACHA20_POLY1305_SHA256"
    s.close()
    assert r.config_set("tls-prefer-server-ciphers", "yes", "tls-session-cache-size", "100",
                        "tls-session-cache-timeout", "60")
    assert not refused(certs, port)


def resumes(port, certs, ticket=True):
    """Whether a TLS 1.2 client resumes its first session on port."""
    ctx = client_ctx(certs)
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    if not ticket:
        ctx.options |= ssl.OP_NO_TICKET
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost")
    resp_over(s).cmd("PING")
    sess = s.session
    # A clean close (close_notify both ways): a session that ends with a
    # bare TCP close is dropped from the server's cache.
    s.unwrap().close()
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost", session=sess)
    try:
        resp_over(s).cmd("PING")
        return s.session_reused
    finally:
        s.close()


def test_session_resumption(request, tls_server, certs):
    srv, port = tls_server()
    r = srv.client()
    got = []
    for caching in ("yes", "no"):
        assert r.config_set("tls-session-caching", caching)
        got.append((caching, resumes(port, certs), resumes(port, certs, ticket=False)))
    # Session ids need the server's cache; tickets do not (as in Redis).
    assert got == [("yes", True, True), ("no", True, False)]
    if not shutil.which("redis-server"):
        return
    rport, tport = free_port(), free_port()
    d = tempfile.mkdtemp()
    p = subprocess.Popen(["redis-server", "--port", str(rport), "--save", "", "--dir", d, *tls_args(certs, tport)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(rport)
        wait_port(tport)
        ref = redis.Redis(port=rport)
        want = []
        for caching in ("yes", "no"):
            ref.config_set("tls-session-caching", caching)
            want.append((caching, resumes(tport, certs)))
        # Tickets resume alike. (Redis 7.0 frees its connections without a
        # close_notify, which makes OpenSSL drop their sessions from its
        # cache: session ids never resume there; here they do, as its
        # documentation of tls-session-caching says they should.)
        assert [g[:2] for g in got] == want
    finally:
        p.terminate()
        p.wait(20)
        shutil.rmtree(d, ignore_errors=True)


def test_start_fails_on_bad_certificate(request, certs):
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    binary = os.path.abspath(request.config.getoption("--server-bin"))
    for extra in (("--tls-cert-file", certs["garbage.crt"]), ("--tls-cert-file", ""),
                  ("--tls-ca-cert-file", "", "--tls-auth-clients", "yes")):
        args = [binary, "--port", str(free_port()), "--save", "", *tls_args(certs, free_port()), *extra]
        p = subprocess.run(args, capture_output=True, text=True, timeout=30, cwd=certs["dir"])
        assert p.returncode != 0
        assert "Failed to configure TLS" in p.stdout + p.stderr


# ---- stalls and garbage ---------------------------------------------------------------


def client_hello():
    """The bytes of a real ClientHello, from an in-memory TLS client."""
    ctx = ssl.create_default_context()
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname="localhost")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


def test_silent_handshakes_do_not_stall_others(tls_server, certs):
    srv, port = tls_server(threads=1)
    hello = client_hello()
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
    half = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
    for s in half:
        s.sendall(hello[: len(hello) // 2])
    r = py_client(certs, port)
    t0 = time.time()
    for i in range(200):
        assert r.set("x", i)
    assert time.time() - t0 < 5
    assert srv.client().ping()
    # The handshake timeout (10 seconds) closes them all.
    time.sleep(11.5)
    for s in idle + half:
        s.settimeout(5)
        try:
            assert s.recv(100) == b""
        except ConnectionResetError:
            pass
        s.close()
    assert r.ping()


def test_garbage_on_tls_port(tls_server, certs):
    srv, port = tls_server()
    rnd = random.Random(20)
    good = py_client(certs, port)
    hello = client_hello()
    for i in range(60):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        try:
            kind = i % 3
            if kind == 0:  # random bytes before any handshake
                s.sendall(bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 4000))))
            elif kind == 1:  # a handshake that turns into garbage
                s.sendall(hello[: rnd.randint(1, len(hello))] + bytes(rnd.getrandbits(8) for _ in range(500)))
            else:  # a record header announcing a huge record, then junk
                s.sendall(b"\x16\x03\x01\xff\xff" + bytes(rnd.getrandbits(8) for _ in range(2000)))
            s.recv(1000)
        except (OSError, socket.timeout):
            pass
        finally:
            s.close()
        assert good.incr("alive") == i + 1
    # Garbage after the handshake: raw bytes under an established session.
    for i in range(20):
        t = tls_sock(certs, port)
        resp_over(t).cmd("PING")
        raw = socket.socket(fileno=os.dup(t.fileno()))
        raw.sendall(bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 3000))))
        raw.settimeout(5)
        try:
            while raw.recv(4096):
                pass
        except OSError:
            pass
        raw.close()
        t.close()
        assert good.ping()
    # Garbage inside a valid session: random commands are answered.
    t = tls_conn(certs, port)
    t.send(bytes(rnd.getrandbits(8) for _ in range(200)) + b"\r\n")
    try:
        assert t.sock.recv(4096).startswith(b"-ERR")
    except (OSError, ConnectionError, ssl.SSLError):
        pass
    t.close()
    assert good.ping()
    assert srv.alive()
    assert srv.client().ping()


def test_hotkv_bench_over_tls(request, tls_server, certs):
    bench = os.path.join(os.path.dirname(os.path.abspath(request.config.getoption("--server-bin"))), "hotkv-bench")
    if not os.path.exists(bench):
        pytest.skip("no hotkv-bench next to the server binary")
    srv, port = tls_server(auth="yes")
    out = subprocess.run([bench, "-p", str(port), "--tls", "--cacert", certs["ca.crt"], "--cert", certs["client.crt"],
                          "--key", certs["client.key"], "--sni", "localhost", "--load", "-n", "3000", "-c", "4",
                          "-P", "50", "SET {key sequence 3000} {value 1024}"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert srv.client().dbsize() == 3000
    assert len(srv.client().get("key_0000000042")) == 1024
    # Without a client certificate the handshake is refused and it says so.
    out = subprocess.run([bench, "-p", str(port), "--tls", "--cacert", certs["ca.crt"], "--load", "-n", "10",
                          "SET a b"], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
