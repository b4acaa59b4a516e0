"""One PPO iteration on generated answers: roll out (up to two assistant turns: a clarifying
question, the user's reply, then the answer), score with RC1's reward, then token-level PPO.

Per token t of the assistant's text: reward r_t = -kl_coef * (log pi_old - log pi_sft) (the KL to
the frozen SFT policy, in the reward as in Ziegler et al. / InstructGPT), plus RC1's reward of the
episode on its last token; advantages by GAE(gamma, lambda) over the assistant's tokens with the
value head's estimates; clipped surrogate + clipped value loss - entropy bonus, `epochs` passes
over minibatches. The reported KL (`kl`) is the mean per-token log pi - log pi_sft over the
assistant's tokens at rollout time. Two controls hold it toward train.ppo.target_kl:
  adaptive coefficient  after the iteration, kl_coef *= 1 + clip(kl / target_kl - 1, -0.2, 0.2) *
                        min(1, n / kl_horizon) (Ziegler et al. 2019), n = the iteration's transitions:
                        in token-level PPO every generated token is an action, so n is the number of
                        policy tokens (the built-in engine counts one action per transition the same way)
  early stop            before each minibatch step, the current policy's KL to the SFT policy is
                        projected: kl + (its importance-weighted per-token KL on the minibatch's tokens
                        - the same tokens' KL at rollout); when the projection is above
                        kl_stop x target_kl and above kl (the update is what raised it), the epoch
                        loop ends (SB3's target_kl early stop, measured against the SFT policy, which
                        target_kl is defined against). The first minibatch of an iteration always steps
                        (its projection is kl itself), so a policy already over the bound is still
                        updated with the KL-penalised reward.
`early_stop`, `updates` / `updates_max`, `kl_projected` (at the stop or the end) and `approx_kl_old`
(SB3's approx KL between the rollout policy and the updated one) go into the metrics line.
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


def adapt_kl_coef(coef, kl, target, n, horizon):
    """Ziegler et al.'s proportional controller: the error clipped to +-0.2, scaled by n / horizon (at most 1)."""
    err = max(-0.2, min(0.2, kl / max(target, 1e-9) - 1))
    return coef * (1 + err * min(1.0, n / horizon))


def stop_now(kl, kl_projected, target, factor):
    """The early stop: the projected KL to the SFT policy is over factor x target and the update raised it."""
    return kl_projected > factor * target and kl_projected > kl


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
    terms = {"policy": 0.0, "value": 0.0, "entropy": 0.0}
    total, count, approx_old = 0.0, 0, 0.0
    projected, stopped = kl, False
    for _ in range(p["epochs"]):
        for s in range(0, n, mb):
            idx = order[s: s + mb].to(dev)
            m = mask[idx]
            k = m.sum().clamp(min=1)
            lp, v, ent = logprobs_values(model, ids[idx], autocast)
            log_ratio = lp - old_lp[idx]
            ratio = torch.exp(log_ratio)
            with torch.no_grad():
                # KL(pi_now || pi_sft) estimated on tokens drawn from the rollout policy: importance weights
                # (self-normalised) on log pi_now - log pi_sft; minus the same tokens' rollout KL = this update's change
                w = ratio * m
                kl_now = float((w * (lp - ref_lp[idx])).sum() / w.sum().clamp(min=1e-9))
                kl_then = float(((old_lp[idx] - ref_lp[idx]) * m).sum() / k)
                projected = kl + kl_now - kl_then
                if count > 0 and stop_now(kl, projected, p["target_kl"], factor):
                    stopped = True
                    break
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
    terms = {k: v / count for k, v in terms.items()}
    ntokens = float(ntok)
    next_coef = adapt_kl_coef(kl_coef, kl, p["target_kl"], ntokens, p["kl_horizon"]) if p.get("adaptive_kl", True) else kl_coef
    terms["kl"] = kl
    terms.update(updates=count, updates_max=p["epochs"] * ((n + mb - 1) // mb), early_stop=stopped, kl_projected=projected,
                 approx_kl_old=approx_old / count)
    return total / count, kl, next_coef, terms, ntokens
