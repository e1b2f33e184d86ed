"""``core.common.initializer``: the same module as ``core.nn.init`` under MindSpore's path."""

from ..nn.init import Constant as Constant
from ..nn.init import HeNormal as HeNormal
from ..nn.init import HeUniform as HeUniform
from ..nn.init import Identity as Identity
from ..nn.init import Initializer as Initializer
from ..nn.init import Normal as Normal
from ..nn.init import One as One
from ..nn.init import Orthogonal as Orthogonal
from ..nn.init import TruncatedNormal as TruncatedNormal
from ..nn.init import Uniform as Uniform
from ..nn.init import XavierNormal as XavierNormal
from ..nn.init import XavierUniform as XavierUniform
from ..nn.init import Zero as Zero
from ..nn.init import calculate_gain as calculate_gain
from ..nn.init import get_initializer as get_initializer
from ..nn.init import initializer as initializer
