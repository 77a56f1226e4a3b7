"""Non-ASCII names: a module whose file name, function, class and method names are not ASCII,
written next to the ground truth and imported from there."""
import os
import sys

import stackrecord

MODULE = u'''
import stackrecord


class \u00d1and\u00fa(object):
    def \u65b9\u6cd5(self):
        stackrecord.hold()


def gr\u00fc\u00dfe_\u0444\u0443\u043d\u043a\u0446\u0438\u044f():
    return \u00d1and\u00fa().\u65b9\u6cd5()
'''

directory = os.path.dirname(os.path.abspath(sys.argv[1]))
name = u"\u043c\u043e\u0434\u0443\u043b\u044c_\u00fc"
with open(os.path.join(directory, name + u".py"), "w", encoding="utf-8") as f:
    f.write(MODULE)
sys.path.insert(0, directory)
module = __import__(name)

stackrecord.setup(expected=1)
getattr(module, u"gr\u00fc\u00dfe_\u0444\u0443\u043d\u043a\u0446\u0438\u044f")()
