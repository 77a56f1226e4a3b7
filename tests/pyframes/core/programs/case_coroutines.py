"""asyncio: coroutines awaiting each other inside a Task, with the event loop's frames
underneath; the innermost coroutine blocks the loop."""
import asyncio

import core_record


async def leaf():
    core_record.hold()


async def middle():
    await leaf()


async def top():
    task = asyncio.ensure_future(middle())
    return await task


core_record.setup(expected=1)
loop = asyncio.new_event_loop()
loop.run_until_complete(top())
