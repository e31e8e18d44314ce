#!/usr/bin/python3
"""sink.py - run in the server namespace of lab.sh: accept on 10.96.0.80:9000, read
and discard everything, for at most 120 s."""
import asyncio, resource
resource.setrlimit(resource.RLIMIT_NOFILE, (min(65536, resource.getrlimit(resource.RLIMIT_NOFILE)[1]),) * 2)
async def h(r, w):
    while await r.read(65536):
        pass
    w.close()
async def main():
    srv = await asyncio.start_server(h, "10.96.0.80", 9000, backlog=8192)
    await asyncio.sleep(120)
asyncio.run(main())
