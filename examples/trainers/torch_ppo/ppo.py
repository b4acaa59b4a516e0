"""One PPO iteration on generated answers: roll out (up to two assistant turns: a clarifying
question, the user's reply, then the answer), score with RC1's reward, then token-level PPO.

Per token t of the assistant's text: reward r_t = -kl_coef * (log pi_old - log pi_sft) (the KL to
the frozen SFT policy, in the reward as in Ziegler et al. / InstructGPT), plus RC1's reward of the
episode on its last token; advantages by GAE(gamma, lambda) over the assistant's tokens with the
value head's estimates; clipped surrogate + clipped value loss - entropy bonus, `epochs` passes
over minibatches. The reported KL (`kl`) is the mean per-token log pi - log pi_sft over the
assistant's tokens at rollout time. Two controls hold it toward train.ppo.target_kl, both driven by
an estimate of the NEXT rollout's KL made on a held-out slice of the rollout batch:
  held-out slice        ppo.kl_holdout (default 0.125) of the iteration's episodes (at least one, none
                        when the batch has a single episode) are never trained on in that iteration;
                        the updated policy's KL to the SFT policy is projected on them: kl + (its
                        importance-weighted per-token KL on the slice's tokens - the same tokens' KL at
                        rollout). Tokens the update has trained on overstate it many times over (the
                        in-sample bias); the slice's tokens do not.
  early stop            before each minibatch step (after the first), the projection is taken and
                        extrapolated by the last step's change; when that is above kl_stop x target_kl
                        and above kl (the update is what raised it), the epoch loop ends (SB3's
                        target_kl early stop, measured against the SFT policy, which target_kl is
                        defined against). The first minibatch always steps, so a policy already over
                        the bound is still updated with the KL-penalised reward.
  coefficient           after the update, on the held-out projection of the updated policy (the
                        predicted next rollout KL, not this rollout's), outside the band [target_kl /
                        kl_stop, kl_stop x target_kl]: log kl_coef += clip(kl_gain x log(predicted / the
                        band's nearer edge), -kl_max_step, +kl_max_step) x min(1, n / kl_horizon), n =
                        policy tokens (every generated token is an action of token-level PPO); inside the
                        band it stays (no wind-up while the early stop holds the KL between target and
                        bound); within [kl_coef_min 1e-4, kl_coef_max 1]. Defaults kl_gain 1, kl_max_step
                        log 2: the coefficient can double per iteration from the first one instead of
                        +20 % after the rollout KL has already risen (Ziegler et al.'s controller).
                        Without the band, an integral step toward target_kl itself drove kl_coef from
                        0.02 to 10 in 20 iterations while the KL sat at 0.04, and the run diverged
                        (bench/results/torch_ppo/h200-kl2-windup).
`early_stop`, `updates` / `updates_max`, `kl_projected` (the held-out projection at the stop or after
the last update: the predicted next KL), `kl_projected_insample` (the same on the minibatch about to be
trained, for comparison) and `approx_kl_old` (SB3's approx KL between the rollout and the updated
policy) go into the metrics line.
"""
import math
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
    """log pi(token_t | <t) for t >= 1 (aligned to position t), and V at position t-1 (the state before the token)."""
    with autocast():
        logits, values = model(ids)
    lp = torch.log_softmax(logits[:, :-1].float(), -1)
    tok_lp = lp.gather(-1, ids[:, 1:, None]).squeeze(-1)
    ent = -(lp.exp() * lp).sum(-1)
    return tok_lp, values[:, :-1].float(), ent


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


def adapt_kl_coef(coef, kl_pred, target, n, horizon, gain=1.0, max_step=math.log(2.0), lo=1e-4, hi=1.0, band=1.5):
    """Integral step on log kl_coef outside the band [target / band, target x band]: gain x log(predicted KL / the
    band's nearer edge), clipped to +-max_step, scaled by n / horizon (at most 1), the coefficient kept within
    [lo, hi]; inside the band, or on a prediction that is not a finite number, it is left as it is."""
    if not math.isfinite(kl_pred):
        return coef
    t = max(target, 1e-9)
    pred = max(kl_pred, 1e-3 * t)
    err = math.log(pred / (t * band)) if pred > t * band else math.log(pred / (t / band)) if pred < t / band else 0.0
    step = max(-max_step, min(max_step, gain * err))
    return min(hi, max(lo, coef * math.exp(step * min(1.0, n / horizon))))


def stop_now(kl, kl_projected, target, factor, last_change=0.0):
    """The early stop: the projected KL to the SFT policy, extrapolated by the last step's change, is over
    factor x target and the update raised it."""
    nxt = kl_projected + max(0.0, last_change)
    return nxt > factor * target and nxt > kl


def ppo_step(model, ref, opt, seqs, masks, rewards, cfg, kl_coef, args, autocast, dev):
    """One iteration's update; returns (mean loss, rollout KL, the next kl_coef, terms, policy tokens)."""
    p = cfg["ppo"]
    factor = p.get("kl_stop", 1.5)
    ids, am, _ = pad(seqs, masks, args.pad_id, dev)
    mask = am[:, 1:]
    n, mb = len(seqs), max(1, min(p["batch"], len(seqs)))
    with torch.no_grad():  # in minibatch chunks: the logits of a whole batch need not fit at once
        parts = [(logprobs_values(model, ids[s: s + mb], autocast)[:2], logprobs_values(ref, ids[s: s + mb], autocast)[0]) for s in range(0, n, mb)]
        old_lp = torch.cat([a[0][0] for a in parts])
        old_v = torch.cat([a[0][1] for a in parts])
        ref_lp = torch.cat([a[1] for a in parts])
    kl_tok = (old_lp - ref_lp) * mask
    ntok = mask.sum().clamp(min=1)
    kl = float(kl_tok.sum() / ntok)
    rew = -kl_coef * kl_tok
    last = (mask * torch.arange(mask.shape[1], device=dev)).argmax(1)
    rew[torch.arange(len(seqs), device=dev), last] += torch.tensor(rewards, device=dev, dtype=rew.dtype)
    adv = gae(rew, old_v * mask, mask, p["gamma"], p["lam"])
    ret = adv + old_v
    mu = (adv * mask).sum() / ntok
    sd = (((adv - mu) ** 2 * mask).sum() / ntok).sqrt()
    adv = (adv - mu) / (sd + 1e-8)
    order = torch.randperm(n, generator=args.ppo_gen)
    h = 0 if n < 2 else min(n - 1, max(1, round(n * p.get("kl_holdout", 0.125))))
    hold, train_order = order[n - h:].to(dev), order[: n - h]
    nt = n - h

    def projection(idx, lp=None):
        """kl + the importance-weighted change of the per-token KL to the SFT policy on episodes idx."""
        m = mask[idx]
        if lp is None:
            lp = logprobs_values(model, ids[idx], autocast)[0]
        w = torch.exp((lp - old_lp[idx]).clamp(max=20.0)) * m  # self-normalised importance weights: tokens were drawn from pi_old
        kl_now = float((w * (lp - ref_lp[idx])).sum() / w.sum().clamp(min=1e-9))
        kl_then = float(((old_lp[idx] - ref_lp[idx]) * m).sum() / m.sum().clamp(min=1))
        return kl + kl_now - kl_then

    terms = {"policy": 0.0, "value": 0.0, "entropy": 0.0}
    total, count, approx_old = 0.0, 0, 0.0
    projected, insample, stopped, prev = kl, kl, False, kl
    for _ in range(p["epochs"]):
        for s in range(0, nt, mb):
            idx = train_order[s: s + mb].to(dev)
            m = mask[idx]
            k = m.sum().clamp(min=1)
            lp, v, ent = logprobs_values(model, ids[idx], autocast)
            log_ratio = lp - old_lp[idx]
            ratio = torch.exp(log_ratio)
            with torch.no_grad():
                if count > 0:
                    insample = projection(idx, lp.detach())
                    if h:
                        projected = projection(hold)
                    else:
                        projected = insample
                    if stop_now(kl, projected, p["target_kl"], factor, projected - prev):
                        stopped = True
                        break
                    prev = projected
                approx_old += float((((ratio - 1) - log_ratio) * m).sum() / k)
            a = adv[idx]
            pg = torch.max(-a * ratio, -a * ratio.clamp(1 - p["clip"], 1 + p["clip"]))
            vc = old_v[idx] + (v - old_v[idx]).clamp(-p["clip"], p["clip"])
            vl = 0.5 * torch.max((v - ret[idx]) ** 2, (vc - ret[idx]) ** 2)
            pl, vl, el = (pg * m).sum() / k, (vl * m).sum() / k, (ent * m).sum() / k
            loss = pl + p["vf_coef"] * vl - p["ent_coef"] * el
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.get("max_grad_norm", 0) > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["max_grad_norm"])
            opt.step()
            terms["policy"] += pl.item()
            terms["value"] += vl.item()
            terms["entropy"] += el.item()
            total += loss.item()
            count += 1
        if stopped:
            break
    if not stopped:  # the updated policy's projection: the predicted next rollout KL
        with torch.no_grad():
            projected = projection(hold) if h else projection(train_order[:mb].to(dev))
    terms = {k: v / count for k, v in terms.items()}
    ntokens = float(ntok)
    next_coef = (adapt_kl_coef(kl_coef, projected, p["target_kl"], ntokens, p["kl_horizon"], p.get("kl_gain", 1.0),
                               p.get("kl_max_step", math.log(2.0)), p.get("kl_coef_min", 1e-4), p.get("kl_coef_max", 1.0), factor) if p.get("adaptive_kl", True) else kl_coef)
    terms["kl"] = kl
    terms.update(updates=count, updates_max=p["epochs"] * ((nt + mb - 1) // mb), early_stop=stopped, kl_projected=projected,
                 kl_projected_insample=insample, kl_holdout_episodes=h, approx_kl_old=approx_old / count)
    return total / count, kl, next_coef, terms, ntokens
