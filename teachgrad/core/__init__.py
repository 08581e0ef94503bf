"""The story: the files a learner reads first, in this order.

- variable.py: `Variable`, a torch tensor plus what autograd knows about it (grad, grad_fn, requires_grad);
- function.py: `Function`, an op's forward and backward side by side, and `apply`, which records the node;
- node.py: the nodes of the backward graph (the node is the ctx), and `AccumulateGrad` at a leaf;
- engine.py: backward, one loop on one screen.

Everything torch adds around them is in teachgrad/rules; see docs/architecture.md for the map.
"""
