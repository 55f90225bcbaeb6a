'use strict';
// Shared settings for the client test files. run.sh starts the server and
// passes its address in SERVER_HOST / SERVER_PORT.

const crypto = require('node:crypto');

const HOST = process.env.SERVER_HOST || '127.0.0.1';
const PORT = Number(process.env.SERVER_PORT || 6379);

// Every test works under its own key prefix, so tests never see each
// other's keys even without FLUSHDB.
let seq = 0;
function keyPrefix(lib) {
  seq += 1;
  return `clients:${lib}:${process.pid}:${seq}:`;
}

function sha1(text) {
  return crypto.createHash('sha1').update(text).digest('hex');
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

module.exports = { HOST, PORT, keyPrefix, sha1, sleep };
