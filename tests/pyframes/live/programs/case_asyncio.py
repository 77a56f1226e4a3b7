"""asyncio: coroutines awaiting each other inside a Task, through an async generator, with the
event loop's own frames underneath. The innermost coroutine blocks the loop."""
import asyncio

import stackrecord


async def leaf():
    stackrecord.hold()


async def numbers():
    await leaf()
    yield 1


async def middle():
    async for value in numbers():
        return value


async def top():
    task = asyncio.ensure_future(middle())
    return await task


stackrecord.setup(expected=1)
loop = asyncio.new_event_loop()
loop.run_until_complete(top())
