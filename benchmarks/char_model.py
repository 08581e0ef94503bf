"""The bench's whole program: a character-level model, trained and then sampled, written once for `lib` = torch or
teachgrad (the same text under both). `make bench` times it (its "program" case); tests/test_char_model.py checks
that teachgrad computes what torch computes with it (loss, gradients, sampled text).
"""

PROGRAM_TEXT = "the quick brown fox jumps over the lazy dog; teachgrad runs what torch runs. " * 3


def char_model(lib, steps: int = 20, block: int = 3, batch: int = 32, samples: int = 20) -> tuple:
    """A character-level model, trained and sampled: the same text for lib=torch and lib=teachgrad."""
    F = lib.nn.functional
    chars = sorted(set(PROGRAM_TEXT))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = [stoi[c] for c in PROGRAM_TEXT]
    X = lib.tensor([ids[i:i + block] for i in range(len(ids) - block)])
    Y = lib.tensor(ids[block:])
    lib.manual_seed(0)
    emb = lib.nn.Embedding(len(chars), 8)
    hidden, out = lib.nn.Linear(block * 8, 64), lib.nn.Linear(64, len(chars))
    params = list(emb.parameters()) + list(hidden.parameters()) + list(out.parameters())
    opt = lib.optim.AdamW(params, lr=1e-2)
    for step in range(steps):
        ix = lib.randint(0, X.shape[0], (batch,))
        h = hidden(emb(X[ix]).view(batch, -1)).tanh()
        loss = F.cross_entropy(out(h), Y[ix])
        opt.zero_grad()
        loss.backward()
        opt.step()
    context, text = [0] * block, []
    with lib.no_grad():
        for _ in range(samples):
            h = hidden(emb(lib.tensor([context])).view(1, -1)).tanh()
            probs = F.softmax(out(h), dim=1)
            ix = lib.multinomial(probs, num_samples=1).item()
            context = context[1:] + [ix]
            text.append(chars[ix])
    return loss, [p.grad for p in params], "".join(text)
