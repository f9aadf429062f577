"""moto's S3 server with ranged GETs that read only their range (tests/bench/remote.sh with
RANGES=slice).

moto 5 answers a ranged GET by reading the whole object out of its buffer and slicing the
result: a 1-byte GET of a 360 MB object costs ~0.5 s of server time, so on moto as it is a
client's wall time follows its GET count times the object size, which no real object store
charges. install() changes two things in the server process only:

  - FakeKey.value, read while a GET with a single "bytes=A-B" (or "bytes=A-") Range header is
    handled on this thread, returns just those bytes (a `Part`, bytes that know where they lie)
  - S3Response._handle_range_header answers a `Part` with 206, its Content-Range and length

Every other request (whole-object GETs, HEADs, PUTs, copies, multipart) runs moto's own code.
"""

import threading

_here = threading.local()


class Part(bytes):
    """The bytes begin..end (inclusive) of an object of `total` bytes."""

    begin = 0
    end = 0
    total = 0


def _span(header, size):
    """(begin, end) inclusive of a single-range header within `size` bytes, else None (moto's
    own code then handles the request, suffix ranges and errors included)."""
    if not header or not header.startswith("bytes=") or "," in header:
        return None
    a, _, b = header[6:].partition("-")
    try:
        begin = int(a)
        end = int(b) if b else size - 1
    except ValueError:
        return None
    if begin > end or begin >= size:
        return None
    return begin, min(end, size - 1)


def install():
    from moto.s3 import models, responses

    key_response = responses.S3Response.key_response

    def ranged_key_response(self, request, full_url, headers):
        _here.range = request.headers.get("range") if request.method == "GET" else None
        try:
            return key_response(self, request, full_url, headers)
        finally:
            _here.range = None

    value = models.FakeKey.value

    def ranged_value(key):
        span = _span(getattr(_here, "range", None), key.size)
        if span is None:
            return value.fget(key)
        _here.range = None  # once per request
        with key.lock:
            key._value_buffer.seek(span[0])
            part = Part(key._value_buffer.read(span[1] - span[0] + 1))
        part.begin, part.end, part.total = span[0], span[1], key.size
        return part

    handle = responses.S3Response._handle_range_header

    def ranged_handle(self, request, response_headers, response_content):
        if not isinstance(response_content, Part):
            return handle(self, request, response_headers, response_content)
        for k in [h for h in response_headers if h.startswith("x-amz-checksum-")]:
            del response_headers[k]
        p = response_content
        response_headers["content-range"] = f"bytes {p.begin}-{p.end}/{p.total}"
        response_headers["content-length"] = str(len(p))
        return 206, response_headers, bytes(p)

    responses.S3Response.key_response = ranged_key_response
    models.FakeKey.value = property(ranged_value, value.fset)
    responses.S3Response._handle_range_header = ranged_handle
