"""One PPO iteration on generated answers: roll out (up to two assistant turns: a clarifying
question, the user's reply, then the answer), score with RC1's reward, then token-level PPO.

Per token t of the assistant's text the reward is RC1's reward of the episode on its last token
(no KL term in the reward); advantages by GAE(gamma, lambda) over the assistant's tokens with the
value head's estimates; clipped surrogate + clipped value loss - entropy bonus + kl_coef x the exact
KL to the frozen SFT policy, `epochs` passes over minibatches. The KL is held toward
train.ppo.target_kl three ways:
  KL loss term          KL(pi || pi_sft) per policy token, exact: summed over the whole vocabulary from
                        the current policy's and the SFT policy's logits at the same positions (the SFT
                        log-probabilities are computed once per iteration, at the policy's tokens
                        only); its gradient reaches the policy directly, not through the value head
                        as a penalty in the per-token reward would (verl's use_kl_loss, OpenRLHF's
                        --use_kl_loss; they estimate it from the sampled token, k3/k2, where a vocabulary
                        of a few thousand tokens lets this trainer compute it exactly)
  held-out projection   ppo.kl_holdout (0.125) of the iteration's episodes are not trained on; before
                        every minibatch step the current policy's exact KL on their policy tokens is
                        measured, and the next rollout's KL projected as the rollout's exact KL + (that
                        KL now - the same tokens' KL at rollout): an estimate free of the in-sample bias
                        of measuring on tokens the update has trained on
  pull-back step        when the projection is over target_kl, that minibatch's step minimises the
                        exact KL alone (no PPO loss): it moves the policy back toward the SFT policy,
                        where an early stop only ends the updates; the first minibatch of an iteration
                        is checked like the others (its projection is the rollout's KL)
  adaptive coefficient  after the iteration, kl_coef *= 1 + clip(kl / target_kl - 1, -0.2, 0.2) *
                        min(1, n / kl_horizon) (Ziegler et al. 2019; at most +-20 % an iteration),
                        n = the iteration's policy tokens, kl = the rollout's exact KL; kept within
                        [1e-4, 10]
The reported KL (`kl`) is the mean per-token log pi - log pi_sft over the assistant's tokens at rollout
time (the sampled-token estimate); `kl_exact` the same tokens' exact per-position KL. `pullbacks`,
`updates` / `updates_max`, `kl_projected` (after the last step: the prediction of the next rollout's
`kl_exact`), `heldout_episodes` and `approx_kl_old` (SB3's approx KL between the rollout policy and the
updated one) go into the metrics line.
"""
import time

import torch
import torch.nn.functional as F

import episodes as E


def last_call(text):
    """(tool, input) of the tool call that a segment ending in <|call|> makes: its last step tag, or (None, None)."""
    parts = E.STEP.split(text.split("<|call|>")[0])
    if len(parts) < 3 or parts[-2] not in ("<calc>", "<wiki>"):
        return None, None
    return parts[-2].strip("<>"), parts[-1].strip()


def rollout(gen_model, sampler, vocab, batch, args, gen, dev):
    """Plays episodes of `batch` scenarios; returns token sequences, action masks (1 = written by the
    policy), rewards and statistics. An episode is up to --max-segments generated segments; a segment
    ends at <|call|> (the environment appends the tool's output and <|obs_end|>, episodes.py), at
    <|end|> after a question (the user's reply follows), or else ends the episode (an answer, <eos>,
    or --max-new tokens without one: the episode then has no answer). A <|call|> that follows no
    tool tag ends the episode as well."""
    t0 = time.perf_counter()
    n = len(batch)
    seqs = [vocab.encode(E.render_prompt(sc)) for sc in batch]
    masks = [[0] * len(s) for s in seqs]
    tools, tool_err, segs = [0] * n, [0] * n, [0] * n
    err_kinds = [{} for _ in range(n)]  # per episode: unavailable / no_document / calc_error -> count
    n_gen, active = 0, list(range(n))
    for _ in range(args.max_segments):
        if not active:
            break
        outs = sampler.generate([seqs[i] for i in active], args.max_new, args.temperature, gen)
        nxt = []
        for i, t in zip(active, outs):
            seqs[i] += t
            masks[i] += [1] * len(t)
            n_gen += len(t)
            segs[i] += 1
            if not t:
                continue
            env = None
            if t[-1] == vocab.call:
                tool, text = last_call(vocab.decode(t))
                if tool is not None:
                    obs = E.tool_output(batch[i], tool, text)
                    tools[i] += 1
                    kind = ("unavailable" if obs.startswith("error: tool") else "calc_error" if obs.startswith("error:")
                            else "no_document" if obs.startswith("No document found") else None)
                    if kind:
                        tool_err[i] += 1
                        err_kinds[i][kind] = err_kinds[i].get(kind, 0) + 1
                    env = obs + "<|obs_end|>"
            elif t[-1] == vocab.end:
                steps, ans = E.parse_turn(vocab.decode(t))
                if ans is None and steps and steps[-1][0] == "ask":
                    env = E.user_turn(E.user_reply(batch[i]))
            if env is not None:
                e = vocab.encode(env)
                seqs[i] += e
                masks[i] += [0] * len(e)
                nxt.append(i)
        active = nxt
    if dev.type == "cuda":
        torch.cuda.synchronize()
    gen_s = time.perf_counter() - t0
    rewards, success, asks, no_answer = [], [], [], []
    for sc, s, m in zip(batch, seqs, masks):
        # the policy's own text, segment by segment (environment text left out)
        text, cur = [], []
        for x, a in zip(s, m):
            if a:
                cur.append(x)
            elif cur:
                text.append(vocab.decode(cur))
                cur = []
        if cur:
            text.append(vocab.decode(cur))
        steps, ans = [], None
        for seg in text:
            for turn in seg.split("<|end|>"):
                st, a = E.parse_turn(turn)
                steps += st
                if a is not None:
                    ans = a
                    break
            if ans is not None:
                break
        sc_scores, ok, c = E.scores(sc, steps, ans, sc["_ref"])
        rewards.append(E.rc1_reward(sc, sc_scores, c, args.weights, args.reward))
        success.append(1.0 if ok else 0.0)
        asks.append(c)
        no_answer.append(ans is None)
    return {"seqs": seqs, "masks": masks, "rewards": rewards, "success": success, "asks": asks, "tools": tools, "tool_errors": tool_err, "error_kinds": err_kinds,
            "segments": segs, "no_answer": no_answer, "n_gen": n_gen, "gen_s": gen_s}


def pad(seqs, masks, pad_id, dev):
    t = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), t), pad_id, dtype=torch.long)
    am = torch.zeros(len(seqs), t)
    valid = torch.zeros(len(seqs), t, dtype=torch.bool)
    for i, (s, m) in enumerate(zip(seqs, masks)):
        ids[i, : len(s)] = torch.tensor(s)
        am[i, : len(m)] = torch.tensor(m, dtype=torch.float)
        valid[i, : len(s)] = True
    return ids.to(dev), am.to(dev), valid.to(dev)


def logprobs_values(model, ids, autocast):
    """log pi(token_t | <t) for t >= 1 (aligned to position t), V at position t-1 (the state before the
    token), the entropy there, and the full log-probabilities over the vocabulary [B, T-1, V]."""
    with autocast():
        logits, values = model(ids)
    lp = torch.log_softmax(logits[:, :-1].float(), -1)
    tok_lp = lp.gather(-1, ids[:, 1:, None]).squeeze(-1)
    ent = -(lp.exp() * lp).sum(-1)
    return tok_lp, values[:, :-1].float(), ent, lp


def exact_kl(lp, ref_lp):
    """KL(pi || pi_ref) per position, summed over the vocabulary: lp, ref_lp log-probabilities [..., V]."""
    return (lp.exp() * (lp - ref_lp)).sum(-1)


def gae(rew, val, mask, gamma, lam):
    adv = torch.zeros_like(rew)
    last, nextv = torch.zeros_like(rew[:, 0]), torch.zeros_like(rew[:, 0])
    for t in range(rew.shape[1] - 1, -1, -1):
        m = mask[:, t] > 0
        delta = rew[:, t] + gamma * nextv - val[:, t]
        g = delta + gamma * lam * last
        adv[:, t] = torch.where(m, g, torch.zeros_like(g))
        last = torch.where(m, g, last)
        nextv = torch.where(m, val[:, t], nextv)
    return adv


def adapt_kl_coef(coef, kl, target, n, horizon):
    """Ziegler et al.'s proportional controller: the error clipped to +-0.2, scaled by n / horizon (at most 1)."""
    err = max(-0.2, min(0.2, kl / max(target, 1e-9) - 1))
    return coef * (1 + err * min(1.0, n / horizon))


def split_holdout(order, share):
    """(trained, held out) episode indices: the last round(share x n) of the iteration's permutation are
    held out (at least one when share > 0 and n >= 2; none for a single episode)."""
    n = len(order)
    h = 0 if share <= 0 or n < 2 else min(n - 1, max(1, round(share * n)))
    return order[: n - h], order[n - h:]


def ppo_step(model, ref, opt, seqs, masks, rewards, cfg, kl_coef, args, autocast, dev):
    """One iteration's update; returns (mean loss, rollout KL, the next kl_coef, terms, policy tokens)."""
    p = cfg["ppo"]
    target = p["target_kl"]
    ids, am, _ = pad(seqs, masks, args.pad_id, dev)
    mask = am[:, 1:]
    sel = mask > 0
    n, mb = len(seqs), max(1, min(p["batch"], len(seqs)))
    with torch.no_grad():  # in minibatch chunks: the logits of a whole batch need not fit at once
        old_lp, old_v, ref_lp, kl_ex, ref_rows = [], [], [], [], []
        for s in range(0, n, mb):
            lp_a, v_a, _, full = logprobs_values(model, ids[s: s + mb], autocast)
            rlp, _, _, rfull = logprobs_values(ref, ids[s: s + mb], autocast)
            old_lp.append(lp_a)
            old_v.append(v_a)
            ref_lp.append(rlp)
            kl_ex.append(exact_kl(full, rfull) * mask[s: s + mb])
            ref_rows.append(rfull[sel[s: s + mb]])  # the SFT policy's log-probabilities at the policy's tokens only
            del full, rfull
        old_lp, old_v, ref_lp, kl_ex, ref_rows = (torch.cat(x) for x in (old_lp, old_v, ref_lp, kl_ex, ref_rows))
    # row of ref_rows for every (episode, position) that is a policy token (row-major, as the chunks were cut)
    row_of = torch.full(mask.shape, -1, dtype=torch.long, device=dev)
    row_of[sel] = torch.arange(int(sel.sum()), device=dev)
    kl_tok = (old_lp - ref_lp) * mask
    ntok = mask.sum().clamp(min=1)
    kl = float(kl_tok.sum() / ntok)
    kl_exact = float(kl_ex.sum() / ntok)
    rew = torch.zeros_like(kl_tok)
    last = (mask * torch.arange(mask.shape[1], device=dev)).argmax(1)
    rew[torch.arange(len(seqs), device=dev), last] += torch.tensor(rewards, device=dev, dtype=rew.dtype)
    adv = gae(rew, old_v * mask, mask, p["gamma"], p["lam"])
    ret = adv + old_v
    mu = (adv * mask).sum() / ntok
    sd = (((adv - mu) ** 2 * mask).sum() / ntok).sqrt()
    adv = (adv - mu) / (sd + 1e-8)
    order = torch.randperm(n, generator=args.ppo_gen)
    train_idx, hold_idx = split_holdout(order, p.get("kl_holdout", 0.125))
    hold = hold_idx.to(dev)
    hold_then = float(kl_ex[hold].sum() / mask[hold].sum().clamp(min=1)) if len(hold) else 0.0

    def projected_kl():
        """The next rollout's KL as the held-out episodes see it now (the rollout's KL when none is held out)."""
        if not len(hold):
            return kl_exact
        with torch.no_grad():
            tot = 0.0
            for s in range(0, len(hold), mb):
                h = hold[s: s + mb]
                full = logprobs_values(model, ids[h], autocast)[3]
                hs = sel[h]
                tot += float(exact_kl(full[hs], ref_rows[row_of[h][hs]]).sum())
        return kl_exact + tot / float(mask[hold].sum().clamp(min=1)) - hold_then

    terms = {"policy": 0.0, "value": 0.0, "entropy": 0.0, "kl_loss": 0.0}
    total, count, pulls, ppo_steps, approx_old = 0.0, 0, 0, 0, 0.0
    for _ in range(p["epochs"]):
        for s in range(0, len(train_idx), mb):
            idx = train_idx[s: s + mb].to(dev)
            pull = projected_kl() > target
            m = mask[idx]
            ms = sel[idx]
            k = m.sum().clamp(min=1)
            lp, v, ent, full = logprobs_values(model, ids[idx], autocast)
            kl_now = exact_kl(full[ms], ref_rows[row_of[idx][ms]]).sum() / k
            log_ratio = lp - old_lp[idx]
            ratio = torch.exp(log_ratio)
            with torch.no_grad():
                approx_old += float((((ratio - 1) - log_ratio) * m).sum() / k)
            if pull:
                loss = kl_now
                pulls += 1
            else:
                a = adv[idx]
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - p["clip"], 1 + p["clip"]))
                vc = old_v[idx] + (v - old_v[idx]).clamp(-p["clip"], p["clip"])
                vl = 0.5 * torch.max((v - ret[idx]) ** 2, (vc - ret[idx]) ** 2)
                pl, vl, el = (pg * m).sum() / k, (vl * m).sum() / k, (ent * m).sum() / k
                loss = pl + p["vf_coef"] * vl - p["ent_coef"] * el + kl_coef * kl_now
                terms["policy"] += pl.item()
                terms["value"] += vl.item()
                terms["entropy"] += el.item()
                ppo_steps += 1
            terms["kl_loss"] += kl_now.item()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.get("max_grad_norm", 0) > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["max_grad_norm"])
            opt.step()
            total += loss.item()
            count += 1
    for key in ("policy", "value", "entropy"):
        terms[key] = terms[key] / ppo_steps if ppo_steps else 0.0
    terms["kl_loss"] /= max(count, 1)
    ntokens = float(ntok)
    next_coef = kl_coef
    if p.get("adaptive_kl", True):
        next_coef = min(10.0, max(1e-4, adapt_kl_coef(kl_coef, kl_exact, target, ntokens, p["kl_horizon"])))
    terms["kl"] = kl
    terms.update(updates=count, updates_max=p["epochs"] * ((len(train_idx) + mb - 1) // mb), pullbacks=pulls, kl_exact=kl_exact,
                 kl_projected=projected_kl(), heldout_episodes=len(hold), approx_kl_old=approx_old / max(count, 1))
    return total / max(count, 1), kl, next_coef, terms, ntokens
