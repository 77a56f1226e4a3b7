"""Methods, class and static methods, a closure and a lambda: qualified names (3.11+) come from
the code objects, names from co_name."""
import core_record


class Trainer(object):
    def step(self):
        return self.helper()

    @classmethod
    def helper(cls):
        return Trainer.static()

    @staticmethod
    def static():
        def closure():
            return (lambda: core_record.hold())()
        return closure()


core_record.setup(expected=1)
Trainer().step()
