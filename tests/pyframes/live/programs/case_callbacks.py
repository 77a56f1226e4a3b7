"""C calling back into Python: sorted(key=...) and a rich comparison called by the sort."""
import stackrecord


class Ordered(object):
    def __init__(self, value):
        self.value = value

    def __lt__(self, other):
        if self.value != other.value:
            stackrecord.hold()
        return self.value < other.value


def sort_key(value):
    return sorted([Ordered(value), Ordered(value + 1)])


def run():
    return sorted([3, 1, 2], key=sort_key)


stackrecord.setup(expected=1)
run()
