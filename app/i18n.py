"""Every word the app shows, in Brazilian Portuguese (the default) and English.

One word for an interval of a recording throughout: *trecho* (English: *stretch*). A reference
*turno* (turn) is what the reference's ``utterances`` tier holds; the audio played is the trecho
with context. ``t(key, **values)`` gives the text in the session's language; ``n(count, key)``
chooses the singular or plural form.
"""

from __future__ import annotations

import os
import re

import streamlit as st

from toolkit.adjudication.context import APP_ENV
from toolkit.adjudication.store import ordinal

LANGUAGES = {"pt": "Português (Brasil)", "en": "English"}

# key: (pt, en)
TEXT: dict[str, tuple[str, str]] = {
    # --- shell, login, sidebar
    "app_title": ("ablate · adjudicação", "ablate · adjudication"),
    "login_title": ("Entrar", "Log in"),
    "login_name": ("Nome", "Name"),
    "login_password": ("Senha", "Password"),
    "login_button": ("Entrar", "Log in"),
    "login_wrong": ("Nome ou senha incorretos.", "Unknown name or wrong password."),
    "login_wait": (
        "Tentativas demais. Espere {seconds} s e tente de novo.",
        "Too many tries. Wait {seconds} s and try again.",
    ),
    "who_title": ("Quem está trabalhando?", "Who is working?"),
    "who_caption": (
        "Seu nome acompanha cada decisão tomada nesta aba. Os nomes não são verificados "
        "(inicie o app com --users ARQUIVO para ter logins).",
        "Your name goes with every decision you make in this tab. Names are not verified "
        "(start the app with --users FILE for logins).",
    ),
    "who_name": ("Seu nome", "Your name"),
    "who_start": ("Começar", "Start"),
    "sidebar_bad_name": (
        "Arquivo de logins: {problem}. O login ainda funciona; dê a essa pessoa outro nome "
        "(ablate app add-user) e apague este do arquivo.",
        "Users file: {problem}. The login still works; give that person another name "
        "(ablate app add-user) and delete this one from the file.",
    ),
    "who_empty": (
        "Digite seu nome: uma decisão sem autor não pode ser gravada.",
        "Please type your name: a decision without an annotator cannot be stored.",
    ),
    "session_failed": (
        "O navegador não guardou a sessão (cookies bloqueados?). O áudio não toca sem ela.",
        "The browser did not keep the session (cookies blocked?). Audio does not play without it.",
    ),
    "sidebar_experiment": ("Experimento", "Experiment"),
    "sidebar_you": ("Você", "You"),
    "sidebar_unverified": (
        "Nomes não verificados neste app (sem logins --users).",
        "Names are not verified in this app (no --users logins).",
    ),
    "sidebar_reference": ("Versão da referência: manifesto {sha}", "Reference version: manifest {sha}"),
    "sidebar_language": ("Idioma / Language", "Idioma / Language"),
    "logout": ("Sair", "Log out"),
    "role_lead": ("líder", "lead"),
    "role_annotator": ("anotador(a)", "annotator"),
    "role_transcriber": ("transcritor(a)", "transcriber"),
    "run_folder": ("Pasta da execução", "Run folder"),
    "no_experiment": (
        "Nenhum experimento: inicie o app com `ablate app EXP`.",
        "No experiment given: start the app with `ablate app EXP`.",
    ),
    "cannot_open": ("Não foi possível abrir o experimento: {error}", "Cannot open the experiment: {error}"),
    "no_runs": (
        "Nenhuma execução em runs/ ainda: rode `ablate run` primeiro.",
        "No run folders under runs/ yet: run `ablate run` first.",
    ),
    "unexpected": (
        "Erro inesperado ({error}). Nada foi gravado; o log do servidor tem os detalhes.",
        "Unexpected error ({error}). Nothing was stored; the server log has the details.",
    ),
    "connection_lost": (
        "O servidor do app não responde (foi parado ou a rede caiu). As decisões gravadas e os rascunhos "
        "estão guardados; esta página reconecta sozinha quando o líder reiniciar o app.",
        "The app's server does not answer (it was stopped, or the network dropped). Saved decisions and "
        "drafts are kept; this page reconnects by itself when the lead restarts the app.",
    ),
    "connection_title": ("Sem conexão com o app", "No connection to the app"),
    "connection_restart": ("ablate app EXP --users ARQUIVO", "ablate app EXP --users FILE"),
    # --- pages
    "page_queue": ("Fila de revisão", "Review queue"),
    "page_review": ("Revisão de trechos", "Stretch review"),
    "page_blind": ("Transcrição às cegas", "Blind transcription"),
    "page_conflicts": ("Conflitos e aplicação", "Conflicts and apply"),
    "page_results": ("Resultados", "Results"),
    # --- kinds and statuses
    "kind_critical": ("palavra crítica", "critical word"),
    "kind_regression": ("regressão diante da linha de base", "regression against the baseline"),
    "kind_disagreement": ("divergência", "disagreement"),
    "kind_seam": ("problema de emenda", "seam problem"),
    "kind_nonspeech_text": ("texto em não fala", "text in non-speech"),
    "kind_unresolved": ("áudio não resolvido", "unresolved audio"),
    "detail_negation": ("negação", "negation"),
    "detail_name": ("nome", "name"),
    "detail_number": ("número", "number"),
    "detail_arms": ("entre braços", "between arms"),
    "detail_recognizers": ("entre reconhecedores", "between recognizers"),
    "detail_words in non-speech": ("palavras em não fala", "words in non-speech"),
    "detail_unresolved": ("não resolvido", "unresolved"),
    "detail_omission": ("omissão", "omission"),
    "detail_duplication": ("duplicação", "duplication"),
    "detail_split word": ("palavra partida", "split word"),
    "detail_flagged seam": ("emenda sinalizada", "flagged seam"),
    "detail_vad cut": ("corte do VAD", "VAD cut"),
    "detail_seam": ("emenda", "seam"),
    "detail_non-speech": ("não fala", "non-speech"),
    "detail_fallback": ("fallback de temperatura", "temperature fallback"),
    "detail_formatting": ("formatação", "formatting"),
    "detail_enhancement": ("realce", "enhancement"),
    "detail_loudness": ("normalização de volume", "loudness normalization"),
    "detail_recognition": ("reconhecimento", "recognition"),
    "status_open": ("aberto", "open"),
    "status_decided": ("decidido", "decided"),
    "status_conflict": ("conflito", "conflict"),
    "status_stale": ("de outra versão", "other version"),
    "mine_open": ("aberto para você", "open for you"),
    "mine_done": ("você decidiu: {action}", "you decided: {action}"),
    "action_keep": ("Manter a referência", "Keep the reference"),
    "action_correct": ("Corrigir", "Correct it"),
    "action_unresolved": ("Não resolvido", "Unresolved"),
    "action_nonspeech": ("Não é fala", "Non-speech"),
    "listeners_one": ("{count} ouvinte decidiu", "{count} listener decided"),
    "listeners_many": ("{count} ouvintes decidiram", "{count} listeners decided"),
    "listeners_none": ("ninguém decidiu ainda", "nobody decided yet"),
    # --- queue
    "queue_shown": (
        "{shown} de {total} trechos. Selecione uma linha e abra-a na revisão.",
        "{shown} of {total} stretches shown. Select a row, then open it in review.",
    ),
    "queue_problem": ("Fora da fila: {problem}", "Not in the queue: {problem}"),
    "queue_open_one": ("1 aberto para você", "1 open for you"),
    "queue_open_many": ("{count} abertos para você", "{count} open for you"),
    "filter_recording": ("Gravação", "Recording"),
    "filter_arm": ("Braço", "Arm"),
    "filter_kind": ("Tipo", "Kind"),
    "filter_status": ("Situação", "Status"),
    "col_rank": ("#", "rank"),
    "col_kind": ("tipo", "kind"),
    "col_detail": ("detalhe", "detail"),
    "col_recording": ("gravação", "recording"),
    "col_start": ("início (s)", "start (s)"),
    "col_end": ("fim (s)", "end (s)"),
    "col_status": ("situação", "status"),
    "col_yours": ("você", "you"),
    "col_listeners": ("ouvintes", "listeners"),
    "col_reference": ("referência", "reference"),
    "col_arms_say": ("os braços dizem", "arms say"),
    "col_arms": ("braços", "arms"),
    "review_selected": ("Revisar o trecho selecionado", "Review the selected stretch"),
    "review_next_open": ("Próximo trecho aberto para você", "Next stretch open for you"),
    # --- review
    "review_nothing": ("Nada nesta fila tem um tempo para ouvir.", "Nothing in this queue has a time to listen to."),
    "review_pick": ("Trecho", "Stretch"),
    "review_saved": (
        "Decisão nº {id} gravada ({action}) em {recording} {start}–{end} s, como {role}.",
        "Saved decision #{id} ({action}) on {recording} {start}–{end} s as {role}.",
    ),
    "review_saved_keep": (
        " A correção não mudava o texto: gravada como Manter.",
        " The correction left the text as it was: stored as a keep.",
    ),
    "review_gone": (
        "Este trecho não está mais na fila (a execução foi pontuada de novo?). Nada foi gravado.",
        "This stretch is no longer in the queue (was the run rescored?). Nothing was stored.",
    ),
    "review_all_done": (
        "Todos os trechos desta fila têm sua decisão. Volte à fila para revisar outros.",
        "Every stretch of this queue has your decision. Go back to the queue for others.",
    ),
    "review_other_version": (
        "Esta execução foi pontuada contra a versão {used} da referência; o app abriu a versão {open}: "
        "o alinhamento abaixo é o da versão aberta.",
        "This run was scored against reference version {used}; the app opened version {open}: "
        "the alignment below is against the open version.",
    ),
    "role_listener": ("{place} ouvinte", "{place} listener"),
    "role_settlement": ("decisão do líder", "lead's settlement"),
    "hidden_one": (
        "Outro ouvinte já decidiu este trecho; a decisão dele aparece depois que você decidir.",
        "Another listener already decided this stretch; their decision shows once you have decided.",
    ),
    "hidden_many": (
        "{count} outros ouvintes já decidiram este trecho; as decisões deles aparecem depois que você decidir.",
        "{count} other listeners already decided this stretch; their decisions show once you have decided.",
    ),
    "history_title": (
        "Decisões neste trecho (as substituídas continuam no registro)",
        "Decisions on this stretch (superseded ones stay in the record)",
    ),
    "hist_id": ("nº", "#"),
    "hist_who": ("quem", "who"),
    "hist_role": ("papel", "role"),
    "hist_decision": ("decisão", "decision"),
    "hist_text": ("texto novo", "new text"),
    "hist_note": ("nota", "note"),
    "hist_time": ("quando (UTC)", "when (UTC)"),
    "hist_version": ("versão da referência", "reference version"),
    "arm_missing": ("hipótese ausente ({path})", "hypothesis missing ({path})"),
    "arm_excluded": (
        "{count} palavra(s) deste braço caem em áudio não resolvido e não são pontuadas.",
        "{count} word(s) of this arm lie in unresolved audio and are not scored.",
    ),
    "arm_excluded_turns": (
        "O pontuador deixa de fora {count} turno(s) deste trecho (áudio não resolvido).",
        "The scorer leaves {count} turn(s) of this stretch out (unresolved audio).",
    ),
    "arm_untimed": ("{count} palavra(s) sem tempo nesta gravação.", "{count} untimed word(s) in this recording."),
    # --- blind
    "blind_caption": (
        "Escreva o que foi dito segundo a convenção de transcrição (abaixo). Esta página nunca lê a saída de um reconhecedor.",
        "Type what was said under the transcription convention (below). This page never reads a recognizer's output.",
    ),
    "blind_convention": ("Convenção de transcrição", "Transcription convention"),
    "blind_recording": ("Gravação", "Recording"),
    "blind_stretch": ("Trecho", "Stretch"),
    "blind_stretch_label": ("{n}. {start}–{end} s · {kind}{done}", "{n}. {start}–{end} s · {kind}{done}"),
    "blind_kind_speech": ("fala", "speech"),
    "blind_kind_pause": ("pausa (confirme ou transcreva)", "pause (confirm or transcribe)"),
    "blind_done_mark": (" · feito", " · done"),
    "blind_source_vad": (
        "Trechos cortados nas pausas que o VAD do experimento encontra (Silero, parâmetros do experimento).",
        "Stretches cut at the pauses the experiment's VAD finds (Silero, the experiment's parameters).",
    ),
    "blind_source_fixed": (
        "Sem Silero nesta instalação: trechos fixos de 10 s (podem cortar palavras; ajuste início e fim).",
        "No Silero in this install: fixed 10 s stretches (they may cut words; adjust start and end).",
    ),
    "blind_finding_pauses": (
        "Procurando as pausas (VAD do experimento; uma vez por gravação)…",
        "Finding the pauses (the experiment's VAD; once per recording)…",
    ),
    "blind_next": ("Próximo trecho não transcrito", "Next untranscribed stretch"),
    "blind_all_done": (
        "Você transcreveu todos os trechos desta gravação.",
        "You transcribed every stretch of this recording.",
    ),
    "blind_start": ("Início (s)", "Start (s)"),
    "blind_end": ("Fim (s)", "End (s)"),
    "blind_end_before": ("O fim precisa vir depois do início.", "The end must come after the start."),
    "blind_text": ("O que foi dito (vazio se ninguém fala)", "What was said (empty if nobody speaks)"),
    "blind_speaker": (
        "Falante (opcional; como na coluna speaker do manifesto, ex. ANA)",
        "Speaker (optional; as in the manifest's speaker column, e.g. ANA)",
    ),
    "blind_speech": ("Este trecho é", "This stretch is"),
    "speech_unset": ("não anotado", "not annotated"),
    "speech_speech": ("fala (confirmada)", "speech (confirmed)"),
    "speech_nonspeech": ("não fala (confirmado: ninguém fala)", "non-speech (confirmed: nobody speaks)"),
    "blind_unresolved": (
        "Áudio não resolvido dentro do trecho (opcional)",
        "Unresolved audio inside the stretch (optional)",
    ),
    "blind_u_from": ("de (s)", "from (s)"),
    "blind_u_to": ("até (s)", "to (s)"),
    "blind_u_note": ("nota (ex. inaudível, sobreposição, nome?)", "note (e.g. inaudível, sobreposição, nome?)"),
    "blind_words": (
        "Tempos das palavras nas bordas (opcional; 0 = não informado)",
        "Word times at the edges (optional; 0 = not given)",
    ),
    "blind_first_end": ("a primeira palavra termina em (s)", "first word ends at (s)"),
    "blind_last_start": ("a última palavra começa em (s)", "last word starts at (s)"),
    "blind_save": ("Gravar este trecho", "Save this stretch"),
    "blind_saved": ("Gravado {start}–{end} s; {path} reescrito.", "Saved {start}–{end} s; {path} rewritten."),
    "blind_mine": ("Sua transcrição de {recording}", "Your transcription of {recording}"),
    "blind_nothing": ("Nada gravado ainda.", "Nothing saved yet."),
    "blind_textgrid": (
        "TextGrid (camadas de turnos, palavras, fala e áudio não resolvido): {path}",
        "TextGrid (tiers utterances, words, speech, unresolved): {path}",
    ),
    "blind_col_text": ("texto", "text"),
    "blind_col_speaker": ("falante", "speaker"),
    "blind_col_speech": ("fala", "speech"),
    "blind_col_unresolved": ("não resolvido", "unresolved"),
    "blind_col_saved": ("gravado (UTC)", "saved (UTC)"),
    "blind_keys": (
        "Atalhos do player (fora dos campos): espaço tocar/pausar com contexto · s só o trecho · r repetir · "
        "l repetição contínua · [ ] velocidade. Ctrl+Enter no texto grava.",
        "Player keys (outside the fields): space play/pause with context · s the stretch alone · r replay · "
        "l loop · [ ] speed. Ctrl+Enter in the text saves.",
    ),
    # --- conflicts and apply
    "ready_one": (
        "1 decisão pronta para aplicar nesta versão da referência",
        "1 decision ready to apply on this reference version",
    ),
    "ready_many": (
        "{count} decisões prontas para aplicar nesta versão da referência",
        "{count} decisions ready to apply on this reference version",
    ),
    "conflicts_one": ("1 conflito para resolver", "1 conflict to settle"),
    "conflicts_many": ("{count} conflitos para resolver", "{count} conflicts to settle"),
    "stale_one": (
        "1 decisão tomada em outra versão (listada abaixo, nunca aplicada a esta)",
        "1 decision made on another version (listed below, never applied to this one)",
    ),
    "stale_many": (
        "{count} decisões tomadas em outra versão (listadas abaixo, nunca aplicadas a esta)",
        "{count} decisions made on another version (listed below, never applied to this one)",
    ),
    "applied_one": ("1 decisão aplicada", "1 decision applied"),
    "applied_many": ("{count} decisões aplicadas", "{count} decisions applied"),
    "conf_none": ("Nenhum conflito entre ouvintes.", "No conflicts between listeners."),
    "conf_decisions": ("Conflitos de decisão", "Decision conflicts"),
    "conf_kind_listeners": ("ouvintes discordam", "listeners disagree"),
    "conf_kind_overlap": (
        "decisões em trechos sobrepostos mudam os mesmos turnos de formas diferentes",
        "decisions on overlapping stretches change the same turns differently",
    ),
    "conf_overlap_one": (
        "{count} trechos que tocam os mesmos turnos, resolvidos juntos: uma decisão vale para todo o "
        "trecho {start}–{end} s e substitui todas as decisões listadas (elas ficam no histórico).",
        "{count} stretches touching the same turns, settled together: one decision holds for the whole "
        "stretch {start}–{end} s and replaces every decision listed (they stay in the history).",
    ),
    "conf_reference": ("Referência: {text}", "Reference: {text}"),
    "conf_no_turn": ("(nenhum turno)", "(no turn)"),
    "conf_settle_as": ("Como {who}: {action} {text}", "As {who}: {action} {text}"),
    "conf_other": ("Outra decisão", "Another decision"),
    "conf_pick": (
        "Escolha como resolver (nada vem pré-selecionado).",
        "Choose how to settle (nothing is preselected).",
    ),
    "choose": ("Escolha", "Choose"),
    "conf_choice": ("Resolver", "Settle"),
    "conf_text": ("Texto (para uma correção)", "Text (for a correction)"),
    "conf_settle": ("Resolver este trecho", "Settle this stretch"),
    "conf_settled": ("Resolvido com a decisão nº {id}.", "Settled with decision #{id}."),
    "conf_own": (
        "Você ouviu e decidiu um destes trechos como ouvinte: outro líder precisa resolver o conflito.",
        "You decided one of these stretches as a listener: another lead settles the conflict.",
    ),
    "conf_stale": ("Decisões tomadas em outra versão da referência", "Decisions made on another reference version"),
    "conf_transcriptions": ("Conflitos de transcrição às cegas", "Blind transcription conflicts"),
    "conf_tr_none": ("Nenhum trecho com transcrições divergentes.", "No stretch where blind transcriptions differ."),
    "conf_tr_head": (
        "{recording} {start}–{end} s · WER entre ouvintes {wer} ({errors} de {words} palavras)",
        "{recording} {start}–{end} s · inter-listener WER {wer} ({errors} of {words} words)",
    ),
    "conf_tr_use": ("Usar o texto de {who}", "Use {who}'s text"),
    "conf_tr_write": ("Escrever outro texto", "Write another text"),
    "conf_tr_save": ("Resolver esta transcrição", "Settle this transcription"),
    "conf_tr_saved": ("Transcrição resolvida (nº {id}).", "Transcription settled (#{id})."),
    "conf_agreed": ("Transcrição acordada", "Agreed transcription"),
    "conf_agreed_caption": (
        "Para cada gravação: o texto em que os ouvintes concordam (ou o do líder), como TextGrid em "
        "transcriptions/_agreed/, pronto para congelar como referência (`ablate manifest freeze`).",
        "Per recording: the text listeners agree on (or the lead's), as a TextGrid in transcriptions/_agreed/, "
        "ready to freeze as a reference (`ablate manifest freeze`).",
    ),
    "conf_agreed_button": (
        "Gravar a transcrição acordada de {recording}",
        "Write the agreed transcription of {recording}",
    ),
    "conf_agreed_done": ("Gravado {path}: {turns} turno(s).", "Wrote {path}: {turns} turn(s)."),
    "conf_agreed_blocked": ("{count} trecho(s) ainda em conflito.", "{count} stretch(es) still in conflict."),
    "conf_apply": ("Gravar uma nova versão da referência", "Write a new reference version"),
    "conf_apply_caption": (
        "Novos TextGrids, um novo manifesto com seus hashes e o registro das decisões aplicadas, em "
        "references/ do experimento com um nome de versão gerado; a versão atual fica como está. "
        "O mesmo que `ablate reference apply EXP`.",
        "New TextGrids, a new manifest with their hashes and a record of the decisions that went in, in the "
        "experiment's references/ under a generated version name; the current version stays as it is. "
        "Same as `ablate reference apply EXP`.",
    ),
    "conf_apply_button": ("Aplicar as decisões", "Apply decisions"),
    "conf_apply_blocked": (
        "Resolva todos os conflitos acima antes de aplicar.",
        "Settle every conflict above before applying.",
    ),
    "conf_applied": (
        "Gravado {path}: {applied}; gravações alteradas: {changed}; novo manifesto sha256 {sha}. "
        "Aponte `manifest =` do experimento para ele para pontuar contra esta versão.",
        "Wrote {path}: {applied}; recordings changed: {changed}; new manifest sha256 {sha}. "
        "Point the experiment's `manifest =` at it to score against this version.",
    ),
    "conf_nothing_changed": ("nenhuma (só confirmações)", "none (confirmations only)"),
    # --- results
    "res_run": (
        "Execução {run} · partição {split} · {recordings} gravação(ões) · pontuada contra a versão {used}",
        "Run {run} · split {split} · {recordings} recording(s) · scored against reference version {used}",
    ),
    "res_not_open": (" — não é a versão aberta aqui ({open})", " — not the version open here ({open})"),
    "res_not_scored": (
        "Esta execução ainda não foi pontuada ({path} ausente).",
        "This run has not been scored yet ({path} is missing).",
    ),
    "res_arms": ("Braços (partição inteira)", "Arms (whole split)"),
    "res_per_recording": ("Por gravação", "Per recording"),
    "res_per_stratum": ("Por estrato", "Per stratum"),
    "res_no_strata": ("Sem estratos no manifesto desta execução.", "No strata in this run's manifest."),
    "res_drift": (
        "Deriva: erro mediano de início de palavra por terço de cada gravação",
        "Drift: median word-onset error per third of each recording",
    ),
    "res_no_drift": (
        "Sem palavras de referência com tempo, logo sem deriva.",
        "No timed reference words, so no drift figures.",
    ),
    "res_drift_x": ("tempo na gravação (s)", "time in the recording (s)"),
    "res_drift_y": ("erro mediano de início (s)", "median onset error (s)"),
    "res_verdict": ("Veredito dos portões", "Gate verdict"),
    "res_no_verdict": ("Sem veredito para esta execução.", "No gate verdict for this run."),
    "res_verdict_line": (
        "{file}: {verdict} ({challenger} contra {baseline})",
        "{file}: {verdict} ({challenger} against {baseline})",
    ),
    "res_gate": ("portão", "gate"),
    "res_measures": ("mede", "measures"),
    "res_value": ("valor", "value"),
    "res_threshold": ("limite", "threshold"),
    "res_passed": ("passou", "passed"),
    "res_instances": ("casos", "instances"),
    "res_reason": ("motivo", "reason"),
    "res_yes": ("sim", "yes"),
    "res_no": ("NÃO", "NO"),
    "res_na": ("não se aplica", "not applicable"),
    "res_report": ("Relatório completo: {path}", "Full report: {path}"),
    "res_arms_filter": ("Braços", "Arms"),
    "res_agreement": ("Concordância entre ouvintes", "Agreement between listeners"),
    "res_tr_agreement": ("Transcrição às cegas", "Blind transcription"),
    "res_tr_summary": (
        "WER entre ouvintes {wer} em {stretches} trecho(s) ouvidos por dois ({words} palavras do primeiro "
        "ouvinte, {errors} erros); {conflicts} conflito(s) aberto(s), {settled} resolvido(s).",
        "Inter-listener WER {wer} over {stretches} stretch(es) heard by two ({words} words of the first "
        "listener, {errors} errors); {conflicts} open conflict(s), {settled} settled.",
    ),
    "res_tr_none": (
        "Nenhum trecho transcrito por dois ouvintes ainda.",
        "No stretch transcribed by two listeners yet.",
    ),
    "res_kappa": ("Decisões nos trechos", "Stretch decisions"),
    "res_kappa_summary": (
        "κ de Cohen {kappa} (IC 95% {low} a {high}) em {pairs} trecho(s) decididos por dois ouvintes; "
        "concordância observada {observed} ({agreed} de {pairs}); correções com o mesmo texto: {same} de {both}.",
        "Cohen's κ {kappa} (95% CI {low} to {high}) over {pairs} stretch(es) decided by two listeners; "
        "observed agreement {observed} ({agreed} of {pairs}); corrections with the same text: {same} of {both}.",
    ),
    "res_kappa_undefined": (
        "κ indefinido ({pairs} trecho(s) com dois ouvintes: poucos, ou todas as decisões numa só categoria); "
        "concordância observada {observed} ({agreed} de {pairs}).",
        "κ undefined ({pairs} stretch(es) with two listeners: too few, or every decision in one category); "
        "observed agreement {observed} ({agreed} of {pairs}).",
    ),
    "res_kappa_none": ("Nenhum trecho decidido por dois ouvintes ainda.", "No stretch decided by two listeners yet."),
    "res_alpha_summary": (
        "α de Krippendorff {alpha} (IC 95% {low} a {high}) sobre as decisões de todos os ouvintes em {pairs} "
        "trecho(s) decididos por dois ou mais ({more} por três ou mais: o κ acima vê só os dois primeiros).",
        "Krippendorff's α {alpha} (95% CI {low} to {high}) over every listener's decisions on {pairs} "
        "stretch(es) decided by two or more ({more} by three or more: the κ above sees their first two only).",
    ),
    "res_alpha_undefined": (
        "α indefinido (poucos trechos, ou todas as decisões numa só categoria).",
        "α undefined (too few stretches, or every decision in one category).",
    ),
    "res_col_listeners": ("ouvintes", "listeners"),
    "res_col_stretches": ("trechos", "stretches"),
    "res_col_agreement": ("concordância", "agreement"),
    "res_first_second": ("primeiro ↓ / segundo →", "first ↓ / second →"),
    "res_col_arm": ("braço", "arm"),
    "res_col_recording": ("gravação", "recording"),
    "res_col_strata": ("estratos", "strata"),
    "res_col_delta": ("ΔWER ante a linha de base", "ΔWER vs baseline"),
    "res_col_ci_low": ("IC 95% inf.", "95% CI low"),
    "res_col_ci_high": ("IC 95% sup.", "95% CI high"),
    "res_col_substitutions": ("substituições", "substitutions"),
    "res_col_deletions": ("apagamentos", "deletions"),
    "res_col_insertions": ("inserções", "insertions"),
    "res_col_errors": ("erros", "errors"),
    "res_col_ref_words": ("palavras da referência", "reference words"),
    "res_col_negation_flipped": ("negações trocadas", "negations flipped"),
    "res_col_negation_inserted": ("negações inseridas", "negations inserted"),
    "res_col_names_errors": ("erros em nomes", "name errors"),
    "res_col_numbers_errors": ("erros em números", "number errors"),
    "res_col_nonspeech_per_minute": ("palavras em não fala por minuto", "words in non-speech per minute"),
    "res_col_drift_s_per_min": ("deriva (s/min)", "drift (s/min)"),
    "res_col_onset_abs_p95_s": ("erro de início p95 (s)", "onset error p95 (s)"),
    # --- waveform view (views/review.py, views/blind.py; components/waveform.js)
    "wave_lane_reference": ("referência", "reference"),
    "wave_lane_yours": ("sua transcrição", "your transcription"),
    "js_wave_title": (
        "Clique para ir a um ponto; arraste para selecionar; arraste uma marca ou a borda dela para acertá-la",
        "Click to jump; drag to select; drag a mark or its edge to set it",
    ),
    "js_wave_keys": (
        "Forma de onda: ← → cursor (Shift: 1 s) · m m selecionar · x não fala · f fala · w tempo da palavra · "
        "b escolher uma borda · , . mover a borda 10 ms · Delete apagar a marca",
        "Waveform: ← → cursor (Shift: 1 s) · m m select · x non-speech · f speech · w word time · "
        "b pick a boundary · , . move the boundary 10 ms · Delete remove the mark",
    ),
    "js_wave_nonspeech": ("não fala", "non-speech"),
    "js_wave_speech": ("fala", "speech"),
    "js_wave_word": ("palavra", "word"),
    "js_wave_selected": (
        "Seleção {from}–{to} s: x não fala · f fala · w tempo da palavra",
        "Selection {from}–{to} s: x non-speech · f speech · w word time",
    ),
    "js_wave_pending": (
        "Início da seleção em {at} s: leve o cursor ao fim e tecle m",
        "Selection starts at {at} s: move the cursor to its end and press m",
    ),
    "js_wave_too_short": ("Seleção curta demais (menos de 10 ms).", "Selection too short (under 10 ms)."),
    "js_wave_no_selection": (
        "Selecione antes um intervalo (m m, ou arraste na forma de onda).",
        "Select an interval first (m m, or drag on the waveform).",
    ),
    "js_wave_no_word": (
        "Nenhuma palavra da transcrição aqui: o tempo de palavra vale para uma palavra com tempo ou a primeira/última de um turno.",
        "No transcribed word here: a word time is for a timed word or the first/last word of a turn.",
    ),
    "js_wave_stored": ("Marca gravada: {mark} {from}–{to} s", "Mark stored: {mark} {from}–{to} s"),
    "js_wave_withdrawn": (
        "Marca apagada (continua no histórico do arquivo).",
        "Mark removed (it stays in the store's history).",
    ),
    "js_wave_not_stored": ("Marca não gravada", "Mark not stored"),
    "js_wave_no_marks": ("Nenhuma marca sua neste trecho.", "None of your marks in this clip."),
    "js_wave_no_edge": ("Escolha antes uma borda de marca (b).", "Pick a mark's boundary first (b)."),
    "js_wave_edge_start": ("Início de {mark} em {at} s: , . movem a borda", "Start of {mark} at {at} s: , . move it"),
    "js_wave_edge_end": ("Fim de {mark} em {at} s: , . movem a borda", "End of {mark} at {at} s: , . move it"),
    # --- team page (leads) and every other page's words added with it
    "page_team": ("Equipe", "Team"),
    "team_people": ("Pessoas e progresso", "People and progress"),
    "team_progress_caption": (
        "Trechos decididos como ouvinte; concordância com outro ouvinte nos trechos que ambos decidiram "
        "(em quantas comparações: uma por par de ouvintes); parte do áudio de cada gravação que a "
        "transcrição às cegas cobre, e a etapa quando a passagem foi concluída ou dispensada (página "
        "Transcrição às cegas: equipe).",
        "Stretches decided as a listener; agreement with another listener on the stretches both decided "
        "(of how many comparisons: one per pair of listeners); the share of each recording's audio the "
        "blind transcription covers, and the stage once the pass was finished or excused (page Blind "
        "transcription: team).",
    ),
    "team_col_name": ("nome", "name"),
    "team_col_role": ("papel", "role"),
    "team_col_decided": ("trechos decididos", "stretches decided"),
    "team_col_agreement": ("concordância", "agreement"),
    "team_agreement": ("{share} em {shared}", "{share} of {shared}"),
    "team_col_blind": ("às cegas (áudio coberto)", "blind (audio covered)"),
    "team_col_assigned": ("atribuído", "assigned"),
    "team_col_by": ("por", "by"),
    "team_col_change": ("mudança", "change"),
    "team_disabled": ("desativado", "disabled"),
    "team_no_users": (
        "Sem arquivo de logins (inicie o app com --users ARQUIVO para adicionar e desativar pessoas aqui).",
        "No users file (start the app with --users FILE to add and disable people here).",
    ),
    "team_add": ("Adicionar uma pessoa", "Add a person"),
    "team_add_button": ("Adicionar", "Add"),
    "team_role": ("Papel", "Role"),
    "team_replace": (
        "Trocar a senha e o papel de um login que já existe",
        "Replace the password and role of an existing login",
    ),
    "team_added": ("Login de {name} ({role}) gravado.", "Login for {name} ({role}) saved."),
    "team_disable": (
        "Desativar ou reativar um login (nada é apagado)",
        "Disable or enable a login (nothing is deleted)",
    ),
    "team_disable_button": ("Desativar", "Disable"),
    "team_enable_button": ("Reativar", "Enable"),
    "team_disabled_done": (
        "{name} foi desativado(a): não entra mais nem grava; o trabalho feito fica.",
        "{name} is disabled: no more logins or saves; the work done stays.",
    ),
    "team_enabled_done": ("{name} foi reativado(a).", "{name} is enabled again."),
    "team_assign": ("Atribuições", "Assignments"),
    "team_assign_caption": (
        "Uma gravação inteira (início e fim vazios) ou um trecho dela: a fila de revisão da pessoa mostra "
        "primeiro o que lhe foi atribuído; o resto continua abaixo.",
        "A whole recording (start and end left empty) or a stretch of it: the person's review queue lists "
        "what is assigned to them first; the rest stays below.",
    ),
    "team_bad_time": (
        "'{typed}' não é um tempo em segundos (ex. 12,5).",
        "'{typed}' is not a time in seconds (e.g. 12.5).",
    ),
    "team_assign_button": ("Atribuir", "Assign"),
    "team_withdraw_button": ("Retirar a atribuição", "Withdraw the assignment"),
    "team_assigned": ("{recording} {span} atribuído a {name}.", "{recording} {span} assigned to {name}."),
    "team_withdrawn": ("{recording} {span} retirado de {name}.", "{recording} {span} withdrawn from {name}."),
    "team_whole": ("(inteira)", "(whole)"),
    "team_log": ("Histórico da equipe (nada é apagado)", "Team history (nothing is deleted)"),
    "team_log_empty": ("Nenhuma mudança registrada ainda.", "No change recorded yet."),
    "team_change_added": ("adicionado", "added"),
    "team_change_replaced": ("senha ou papel trocados", "password or role replaced"),
    "team_change_disabled": ("desativado", "disabled"),
    "team_change_enabled": ("reativado", "enabled"),
    "team_change_assigned": ("atribuído:", "assigned:"),
    "team_change_withdrawn": ("retirado:", "withdrawn:"),
    "team_not_allowed": (
        "Seu login foi desativado por um líder: nada foi gravado.",
        "Your login was disabled by a lead: nothing was stored.",
    ),
    "queue_assigned": ("atribuído a você", "assigned to you"),
    "seamflag_disagreement": ("as janelas discordam", "disagreement"),
    "seamflag_no_agreement": ("nenhum par concorda", "no agreement"),
    "seamflag_empty_side": ("um lado vazio", "empty side"),
    "seamflag_untimed": ("palavras sem tempo", "untimed"),
    "seamflag_timing": ("tempos discordam", "timing"),
    "seamflag_edge_word": ("palavra na borda", "edge word"),
    "seamflag_different_reading": ("leitura diferente", "different reading"),
    "audit_deleted": ("apagada", "deleted"),
    "audit_substituted": ("substituída", "substituted"),
    "audit_inserted": ("inserida", "inserted"),
    "audit_error": ("erro", "error"),
    "audit_repetition dropped": ("repetição perdida", "repetition dropped"),
    "audit_ambiguous": ("ambígua", "ambiguous"),
    "queue_row": ("Trecho nº {rank} da fila", "Stretch #{rank} of the queue"),
    "verdict_PROMOTE": ("PROMOVER", "PROMOTE"),
    "verdict_RETAIN BASELINE": ("MANTER A LINHA DE BASE", "RETAIN BASELINE"),
    "gate_new_negation_errors": (
        "negações trocadas e inseridas que a linha de base não tinha",
        "negation flips and insertions the baseline did not make",
    ),
    "gate_new_name_errors": (
        "nomes que a linha de base acertou e o desafiante errou",
        "name occurrences the baseline got right and the challenger got wrong",
    ),
    "gate_new_number_errors": (
        "números que a linha de base acertou e o desafiante errou",
        "number occurrences the baseline got right and the challenger got wrong",
    ),
    "gate_lost_speech_turns": (
        "turnos que a linha de base reconheceu (metade das palavras ou mais) e o desafiante apagou inteiros",
        "reference turns the baseline recognized (>= half the words) and the challenger deleted entirely",
    ),
    "gate_seam_omissions": (
        "palavras da referência que o desafiante omitiu perto de uma emenda",
        "reference words the challenger omitted near a window seam",
    ),
    "gate_seam_duplications": (
        "palavras que o desafiante duplicou perto de uma emenda",
        "words the challenger duplicated near a window seam",
    ),
    "gate_vad_speech_recall": (
        "fração da fala anotada que o VAD do desafiante manteve",
        "fraction of annotated speech duration the challenger's VAD kept",
    ),
    "gate_onset_p95_s": (
        "p95 do erro absoluto de início de palavra do desafiante, em segundos",
        "p95 absolute word onset error of the challenger, seconds",
    ),
    "gate_drift_s_per_min": (
        "maior |deriva de início| por gravação do desafiante, segundos por minuto",
        "largest per-recording |onset drift| of the challenger, seconds per minute",
    ),
    "gate_wer_reduction_points": (
        "limite inferior do intervalo bootstrap pareado da redução de WER, pontos percentuais",
        "lower bound of the paired bootstrap interval of the WER reduction, percentage points",
    ),
    "gate_verdict_flips_under_dither": (
        "repetições do holdout sob dither inaudível cujo veredito dos outros portões muda",
        "holdout reruns under inaudible dither (seeds 1 to reruns) whose verdict of the other gates differs",
    ),
    "caveat_size": (
        "{split}: {recordings} gravação(ões), {minutes} min, {words} palavras de referência; um teste pequeno "
        "não estabelece a confiabilidade contra falhas raras",
        "{split} is {recordings} recording(s), {minutes} min, {words} reference words; a small pass cannot "
        "establish rare-failure reliability",
    ),
    "caveat_bound": (
        "{gate}: 0 falhas em {n}: limite superior unilateral exato de 95% da taxa de falha {bound}",
        "{gate}: 0 failures in {n}: exact one-sided 95% upper bound on the failure rate {bound}",
    ),
    "caveat_too_few": (
        "{gate}: 0 falhas em {n}: poucas demais para limitar a taxa de falha (limite superior de 95% {bound})",
        "{gate}: 0 failures in {n}: too few to bound the failure rate (95% upper bound {bound})",
    ),
    "caveat_nothing": (
        "{gate}: 0 oportunidades: este portão não testou nada",
        "{gate}: 0 opportunities: this gate tested nothing",
    ),
    "res_col_wer": ("WER", "WER"),
    "res_col_cer": ("CER", "CER"),
    "res_col_stratum": ("estrato", "stratum"),
    "res_col_third": ("terço", "third"),
    "res_col_matched": ("palavras pareadas", "matched words"),
    "res_col_recordings": ("gravações", "recordings"),
    # --- review desk (browser side)
    "js_play_context": ("▶ Trecho com contexto (espaço)", "▶ With context (space)"),
    "js_play_alone": ("▶ Só o trecho (s)", "▶ Stretch alone (s)"),
    "js_replay": ("↺ Repetir (r)", "↺ Replay (r)"),
    "js_loop": ("Repetição contínua (l)", "Loop (l)"),
    "js_rate": ("Velocidade ([ ])", "Speed ([ ])"),
    "js_loading": ("carregando o áudio…", "loading the audio…"),
    "js_audio_error": ("áudio indisponível", "audio unavailable"),
    "js_bar_title": ("Vermelho: o trecho; clique para ir a um ponto", "Red: the stretch; click to jump"),
    "js_reference": ("referência", "reference"),
    "js_no_turn": ("(nenhum turno: ninguém fala aqui na referência)", "(no turn: nobody speaks here in the reference)"),
    "js_nothing": ("(nada)", "(nothing)"),
    "js_op_equal": ("igual", "correct"),
    "js_op_substitute": ("substituição", "substitution"),
    "js_op_delete": (
        "apagamento (palavra da referência que o braço perde)",
        "deletion (a reference word the arm misses)",
    ),
    "js_op_insert": ("inserção", "insertion"),
    "js_op_skip": (
        "palavra opcional da referência, omitida sem custo",
        "optional reference word, left out at no cost",
    ),
    "js_critical": ("negação, nome ou número", "negation, name or number"),
    "js_critical_negation": ("negação", "negation"),
    "js_critical_name": ("nome", "name"),
    "js_critical_number": ("número", "number"),
    "js_edge_before": (
        "inserção que o pontuador põe entre o turno anterior e este trecho",
        "insertion the scorer places between the previous turn and this stretch",
    ),
    "js_edge_after": (
        "inserção que o pontuador põe entre este trecho e o turno seguinte",
        "insertion the scorer places between this stretch and the next turn",
    ),
    "js_edge_legend": ("inserção na borda (entre turnos)", "insertion at an edge (between turns)"),
    "js_legend": (
        "o alinhamento é o do próprio pontuador na gravação inteira (tokens normalizados; passe o mouse para ver os tempos)",
        "the alignment is the scorer's own over the whole recording (normalized tokens; hover for times)",
    ),
    "js_decision": ("Decisão", "Decision"),
    "js_text_label": (
        "Texto corrigido (substitui o(s) turno(s) inteiro(s), pela convenção)",
        "Corrected text (replaces the whole turn(s), under the convention)",
    ),
    "js_text_off": ("(o texto não conta para esta decisão)", "(the text does not count for this decision)"),
    "js_note_label": ("Nota (opcional)", "Note (optional)"),
    "js_note_hint": (
        "Nota (opcional; em Não resolvido vira o rótulo, ex. inaudível)",
        "Note (optional; for Unresolved it becomes the label, e.g. inaudível)",
    ),
    "js_edited": (
        "Texto editado: sem decisão escolhida, Enter grava como correção.",
        "Text edited: with no decision chosen, Enter saves it as a correction.",
    ),
    "js_draft_restored": (
        "Rascunho recuperado: seu trabalho neste trecho foi restaurado.",
        "Draft restored: your work on this stretch is back.",
    ),
    "js_ask_choose": (
        "Escolha uma decisão: 1 Manter · 2 Corrigir · 3 Não resolvido · 4 Não é fala.",
        "Choose a decision: 1 Keep · 2 Correct · 3 Unresolved · 4 Non-speech.",
    ),
    "js_ask_keep_or_correct": (
        "Você editou o texto mas escolheu Manter. 2 = gravar como correção · 1 = manter a referência e descartar a edição · Esc = voltar.",
        "You edited the text but chose Keep. 2 = save as a correction · 1 = keep the reference and drop the edit · Esc = back.",
    ),
    "js_ask_text": (
        "Uma correção precisa do texto corrigido (para dizer que ninguém fala, use 4).",
        "A correction needs the corrected text (to say nobody speaks, use 4).",
    ),
    "js_save": ("Gravar e ir ao próximo (Enter)", "Save and next (Enter)"),
    "js_saving": ("Gravando…", "Saving…"),
    "js_previous": ("← Anterior (k)", "← Previous (k)"),
    "js_next": ("Próximo (j) →", "Next (j) →"),
    "js_history_title": ("Decisões neste trecho", "Decisions on this stretch"),
    "js_keys": (
        "Atalhos: espaço tocar/pausar · s só o trecho · r repetir · l repetição · [ ] velocidade · 1–4 decisão "
        "(2 põe o cursor no texto) · e editar o texto · n nota · Enter gravar e ir ao próximo · j/k próximo/anterior · Esc sair do campo",
        "Keys: space play/pause · s stretch alone · r replay · l loop · [ ] speed · 1–4 decision "
        "(2 puts the cursor in the text) · e edit the text · n note · Enter save and next · j/k next/previous · Esc leave the field",
    ),
    # --- blindness per recording, blind drafts, saving while the server is down
    "blind_hidden": (
        "Ocultas até você concluir (ou ser dispensado(a) de) a transcrição às cegas: {recordings}. "
        "Nada do que os reconhecedores escreveram nelas aparece aqui.",
        "Hidden until you finish (or are excused from) their blind transcription: {recordings}. "
        "Nothing the recognizers wrote for them is shown here.",
    ),
    "res_pooled_hidden": (
        "Tabelas, gráficos e veredito que somam todas as gravações do experimento ficam ocultos enquanto "
        "alguma delas estiver oculta para você.",
        "Tables, charts and the verdict pooled over every recording of the run stay hidden while one of "
        "them is hidden from you.",
    ),
    "blind_finish": ("Concluir a transcrição às cegas de {recording}", "Finish the blind transcription of {recording}"),
    "blind_finish_caption": (
        "Depois de concluir, esta transcrição não aceita mais trechos e as saídas dos modelos para esta "
        "gravação passam a aparecer para você nas outras páginas.",
        "Once finished, this transcription takes no more stretches, and the models' output for this "
        "recording appears to you on the other pages.",
    ),
    "blind_pass_finished": (
        "Você concluiu a transcrição às cegas de {recording}; ela não aceita mais trechos.",
        "You finished the blind transcription of {recording}; it takes no more stretches.",
    ),
    "blind_pass_excused": (
        "{by} dispensou você da transcrição às cegas de {recording}; ela não aceita mais trechos.",
        "{by} excused you from the blind transcription of {recording}; it takes no more stretches.",
    ),
    "blind_draft_restored": (
        "Rascunho recuperado: o formulário voltou como você o deixou.",
        "Draft restored: the form is back as you left it.",
    ),
    "page_stages": ("Transcrição às cegas: equipe", "Blind transcription: team"),
    "stages_caption": (
        "Em que etapa cada pessoa está em cada gravação. Até concluir (ou ser dispensada), a pessoa não vê "
        "nenhuma saída dos modelos para a gravação.",
        "Where each person stands on each recording. Until they finish (or are excused), they see no "
        "model output for the recording.",
    ),
    "stages_nobody": ("Ninguém para acompanhar ainda.", "Nobody to follow yet."),
    "stages_col_person": ("pessoa", "person"),
    "stages_col_recording": ("gravação", "recording"),
    "stages_col_stage": ("etapa", "stage"),
    "stages_col_segments": ("trechos gravados", "stretches saved"),
    "stages_col_by": ("fechada por", "closed by"),
    "stages_col_at": ("em (UTC)", "at (UTC)"),
    "stage_not_started": ("não começou", "not started"),
    "stage_in_progress": ("em andamento", "in progress"),
    "stage_finished": ("concluída", "finished"),
    "stage_excused": ("dispensada", "excused"),
    "stages_excuse": ("Dispensar da transcrição às cegas", "Excuse from the blind transcription"),
    "stages_excuse_caption": (
        "A dispensa é definitiva e fica registrada com seu nome: a pessoa passa a ver as saídas dos modelos "
        "para a gravação e não transcreve mais às cegas.",
        "An excuse is final and recorded with your name: the person then sees the models' output for the "
        "recording and transcribes it blind no more.",
    ),
    "stages_excuse_button": ("Dispensar", "Excuse"),
    "stages_excused": ("{person} dispensado(a) de {recording}.", "{person} excused from {recording}."),
    "review_saved_before": (
        "Esta decisão já estava gravada (#{id}); nada foi gravado de novo.",
        "This decision was already saved (#{id}); nothing was saved again.",
    ),
    "js_save_offline": (
        "Sem resposta do servidor: a decisão NÃO foi gravada. O formulário continua aqui; grave de novo "
        "(Enter) quando o servidor voltar.",
        "No answer from the server: the decision was NOT saved. The form stays here; save again (Enter) "
        "once the server is back.",
    ),
}


def language() -> str:
    """The session's language: chosen in the sidebar, else ``ablate app --lang``, else Portuguese."""
    chosen = st.session_state.get("lang") or os.environ.get(APP_ENV["lang"]) or "pt"
    return chosen if chosen in LANGUAGES else "pt"


def t(key: str, **values: object) -> str:
    pt, en = TEXT[key]
    text = pt if language() == "pt" else en
    return text.format(**values) if values else text


# A listener's place on a stretch in Portuguese, in words up to the tenth (then 11º ...).
PLACES_PT = ("primeiro(a)", "segundo(a)", "terceiro(a)", "quarto(a)", "quinto(a)") + (
    "sexto(a)",
    "sétimo(a)",
    "oitavo(a)",
    "nono(a)",
    "décimo(a)",
)


def role(decision_role: str, place: int | None) -> str:
    """A decision's role in words: a listener as their place on the stretch (``terceiro(a) ouvinte``,
    ``third listener``), a settlement as the lead's."""
    if place is None:
        return t(f"role_{decision_role}")
    if language() != "pt":
        return t("role_listener", place=ordinal(place))
    return t("role_listener", place=PLACES_PT[place - 1] if place <= len(PLACES_PT) else f"{place}º")


def n(count: int, one: str, many: str, **values: object) -> str:
    """``one`` for a count of 1, ``many`` otherwise (``{count}`` filled in)."""
    return t(one if count == 1 else many, count=count, **values)


def detail(text: str) -> str:
    """A queue item's detail in the session's language (``flagged seam (disagreement, timing)`` with its
    seams' flags translated too)."""
    head, _, rest = text.partition(" (")
    key = f"detail_{head}"
    if key not in TEXT:
        return text
    flags = ", ".join(translated("seamflag_", flag) for flag in rest.removesuffix(")").split(", ")) if rest else ""
    return t(key) + (f" ({flags})" if rest else "")


def said(text: str) -> str:
    """What an arm says at a critical word, ``words (deleted)``, with the audit's outcome translated."""
    found = re.fullmatch(r"(.*?) ?\(([^()]+)\)", text)
    return f"{found[1]} ({translated('audit_', found[2])})".lstrip() if found else text


def number(value: float, digits: int = 2) -> str:
    """A number as the language writes it (decimal comma in Portuguese)."""
    text = f"{value:,.{digits}f}"
    return text.replace(",", " ").replace(".", ",").replace(" ", ".") if language() == "pt" else text


def figure(value: float) -> str:
    """A measured value: a whole number as such, else with two decimals (``0,25``)."""
    return number(value, 0) if float(value).is_integer() else number(value, 2)


def percent(value: float | None, digits: int = 1) -> str:
    """A fraction as a percentage the language's way (``12,5%``); a dash when there is none."""
    return "—" if value is None else f"{number(100 * value, digits)}%"


# The caveat ``ablate gate`` writes (toolkit.protocol.gates.caveat), read back into its figures.
_CAVEAT = re.compile(
    r"(?P<split>\S+) is (?P<recordings>\d+) recording\(s\), (?P<minutes>[\d.]+) min, (?P<words>\d+) reference words; "
    r"a small pass cannot establish rare-failure reliability(?: \((?P<bounds>.*)\))?$"
)
_BOUND = re.compile(
    r"(?P<gate>\w+): (?:0 opportunities: this gate tested nothing|0 failures in (?P<n>\d+): (?:exact one-sided 95% "
    r"upper bound on the failure rate (?P<bound>[\d.]+)%|too few to bound the failure rate \(95% upper bound "
    r"(?P<few>[\d.]+)%\)))$"
)


def caveat(text: str) -> str:
    """A gate verdict's caveat in the session's language (a caveat of another shape stays as written)."""
    found = _CAVEAT.match(text)
    if found is None or language() != "pt":
        return text
    line = t(
        "caveat_size",
        split=found["split"],
        recordings=found["recordings"],
        minutes=number(float(found["minutes"]), 1),
        words=number(int(found["words"]), 0),
    )
    bounds = []
    for part in (found["bounds"] or "").split("; ") if found["bounds"] else []:
        bound = _BOUND.match(part)
        if bound is None:
            bounds.append(part)
        elif bound["n"] is None:
            bounds.append(t("caveat_nothing", gate=bound["gate"]))
        else:
            key, value = ("caveat_bound", bound["bound"]) if bound["bound"] else ("caveat_too_few", bound["few"])
            bounds.append(t(key, gate=bound["gate"], n=bound["n"], bound=percent(float(value) / 100)))
    return line + (" (" + "; ".join(bounds) + ")" if bounds else "")


def translated(prefix: str, text: str) -> str:
    """``text`` (a verdict, a gate's name) through the catalogue key ``prefix + text``, or as it is."""
    return t(prefix + text) if prefix + text in TEXT else text


def vega_locale() -> dict[str, object]:
    """The number format of charts (Vega's d3 locale): the same separators as ``number``."""
    if language() != "pt":
        return {"decimal": ".", "thousands": ",", "grouping": [3], "currency": ["$", ""]}
    return {"decimal": ",", "thousands": ".", "grouping": [3], "currency": ["R$ ", ""], "percent": "%"}


def browser_strings() -> dict[str, str]:
    """The desk's and player's words (keys without the ``js_`` prefix) plus the shared ones."""
    strings = {key[3:]: t(key) for key in TEXT if key.startswith("js_")}
    strings.update({f"action_{a}": t(f"action_{a}") for a in ("keep", "correct", "unresolved", "nonspeech")})
    strings.update({key: t(key) for key in ("connection_lost", "connection_title", "connection_restart")})
    strings["locale"] = "pt-BR" if language() == "pt" else "en"  # for numbers the browser writes
    return strings
