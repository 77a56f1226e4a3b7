"""Methods of every kind: instance, inherited, property, classmethod, staticmethod, __call__ of a
nested class, and a method reached through super()."""
import stackrecord


class Base(object):
    def template(self):
        return self.hook()

    def hook(self):
        return self.prop


class Model(Base):
    def hook(self):
        return super(Model, self).hook()

    @property
    def prop(self):
        return Model.build()

    @classmethod
    def build(cls):
        return cls.make()

    @staticmethod
    def make():
        return Model.Inner()()

    class Inner(object):
        def __call__(self):
            stackrecord.hold()


stackrecord.setup(expected=1)
Model().template()
