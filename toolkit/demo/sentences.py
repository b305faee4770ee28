"""Brazilian Portuguese sentences for the demo corpus, written for it, with the names they contain.

Texts follow the transcription convention (numbers as spoken, in words; repetitions kept), and the
synthesizer reads exactly the same words, so each text is the verbatim reference of its audio.
Many sentences carry the critical words a pipeline must not lose: negations, names and numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_AFTER_COMMA = re.compile(r"(?<=,)\s+")


@dataclass(frozen=True)
class Sentence:
    """One utterance text and the person/place/organisation names that occur in it verbatim."""

    text: str
    names: tuple[str, ...] = ()

    @property
    def phrases(self) -> list[str]:
        """The text split after each comma; phrases are synthesized apart so their edges are exact."""
        return _AFTER_COMMA.split(self.text)


def _s(text: str, *names: str) -> Sentence:
    return Sentence(text, names)


SENTENCES: tuple[Sentence, ...] = (
    _s("Bom dia a todos, vamos começar a reunião de hoje."),
    _s("A doutora Maria Aparecida chegou de Fortaleza ontem à noite.", "Maria Aparecida", "Fortaleza"),
    _s("Não, não, não, não foi isso que eu quis dizer."),
    _s("O contrato foi assinado em dois mil e dezenove, em São Paulo.", "São Paulo"),
    _s("O valor total ficou em mil e quinhentos reais."),
    _s("Ninguém avisou o João que a audiência tinha sido adiada.", "João"),
    _s("A inflação do mês passado foi de quatro vírgula dois por cento."),
    _s("Eu nunca disse que concordava com essa proposta."),
    _s("A paciente não relata febre nem dor de cabeça."),
    _s("A consulta está marcada para as oito e meia da manhã."),
    _s("Ele chegou em terceiro lugar na corrida de Belo Horizonte.", "Belo Horizonte"),
    _s("Sim."),
    _s("Pois é, a gente ainda não recebeu nada."),
    _s("O senhor Antônio Carlos mora em Recife há vinte e três anos.", "Antônio Carlos", "Recife"),
    _s("Jamais aceitaríamos um acordo desses sem consultar a equipe."),
    _s("A reforma custou trinta e dois mil reais, bem mais do que o previsto."),
    _s("Olha, eu acho que não dá para terminar isso até sexta-feira."),
    _s("A Fernanda Lima vai apresentar os resultados do segundo trimestre.", "Fernanda Lima"),
    _s("Nada foi decidido sobre a mudança para Curitiba.", "Curitiba"),
    _s("São quinze para as dez, vamos fazer um intervalo de dez minutos."),
    _s("O paciente toma cinquenta miligramas de losartana duas vezes por dia."),
    _s("Não é verdade que o Pedro faltou à reunião de março.", "Pedro"),
    _s("O voo para Manaus sai às quatorze horas e vinte minutos.", "Manaus"),
    _s("Cerca de sessenta por cento dos entrevistados não souberam responder."),
    _s("É, é, é isso mesmo que a gente combinou."),
    _s("A testemunha afirmou que nunca tinha visto o réu antes."),
    _s("Dona Cida, a senhora pode repetir o seu endereço, por favor?", "Cida"),
    _s("Moro na rua Treze de Maio, número duzentos e quarenta e cinco.", "Treze de Maio"),
    _s("O Brasil ganhou a Copa pela primeira vez em mil novecentos e cinquenta e oito.", "Brasil"),
    _s("Nem o prefeito nem o vice compareceram à cerimônia em Salvador.", "Salvador"),
    _s("Ela completou noventa anos no dia primeiro de janeiro."),
    _s("A gente não tem nenhum problema com isso."),
    _s("O Lucas e a Beatriz estudaram juntos em Brasília.", "Lucas", "Beatriz", "Brasília"),
    _s("O aluguel subiu de dois mil para dois mil e trezentos reais."),
    _s("Não."),
    _s("Ninguém aqui sabe onde fica a chave do arquivo."),
    _s("O processo tem mais de mil e duzentas páginas."),
    _s("Eu não sei, talvez a Juliana saiba responder melhor.", "Juliana"),
    _s("A pressão estava em doze por oito quando ela chegou ao hospital."),
    _s("A sessão foi encerrada às dezoito horas e quinze minutos."),
    _s("Porto Alegre registrou a menor temperatura do ano, três graus.", "Porto Alegre"),
    _s("Nunca, nunca mais eu volto naquele restaurante."),
    _s("O réu declarou que não conhecia a vítima."),
    _s("A empresa demitiu cento e vinte funcionários no primeiro semestre."),
    _s("Tá bom, então a gente se fala amanhã."),
    _s("O desconto é de vinte e cinco por cento à vista."),
    _s("O Rafael Souza foi eleito vereador em Campinas.", "Rafael Souza", "Campinas"),
    _s("Isso não tem nada a ver com o que foi discutido."),
    _s("Tomei o remédio às sete horas, mas a dor não passou."),
    _s("A obra começou em dois mil e vinte e dois e ainda não terminou."),
    _s("Foram três dias de chuva sem parar em Belém.", "Belém"),
    _s("A Carla é a quarta pessoa da fila.", "Carla"),
    _s("Ele nem olhou para trás quando saiu da sala."),
    _s("O faturamento cresceu doze por cento em relação ao ano anterior."),
    _s("A audiência de conciliação ficou para o dia vinte e sete de outubro."),
    _s("Não tem ninguém em casa agora, pode ligar mais tarde."),
    _s("O jogo do Flamengo começa às nove da noite.", "Flamengo"),
    _s("Meu avô nasceu em Ouro Preto em mil novecentos e trinta e dois.", "Ouro Preto"),
    _s("Eu jamais falaria uma coisa dessas para a minha mãe."),
    _s("A multa pode chegar a cinco mil reais."),
    _s("Olha só, olha só, chegou mais gente."),
    _s("A professora Helena Duarte corrigiu as provas do sexto ano.", "Helena Duarte"),
    _s("Não houve nenhum registro de ocorrência naquela noite."),
    _s("A taxa de juros caiu para dez vírgula cinco por cento."),
    _s("O ônibus para Florianópolis atrasou quarenta minutos.", "Florianópolis"),
    _s("Ela não queria ir, mas acabou indo mesmo assim."),
    _s("Nada disso estava no relatório que recebemos."),
    _s("O Marcos pediu demissão depois de quinze anos na empresa.", "Marcos"),
    _s("Foram vendidos três mil e quinhentos ingressos em uma hora."),
    _s("Pode ser, mas eu ainda não estou convencido."),
    _s("O laudo ficou pronto no dia doze de fevereiro."),
    _s("Goiânia e Cuiabá tiveram os dias mais quentes da semana.", "Goiânia", "Cuiabá"),
    _s("A criança não tem alergia a nenhum medicamento."),
    _s("O nosso primeiro cliente foi uma padaria do bairro."),
    _s("Sem dúvida."),
    _s("A Ana Paula mandou a planilha ontem às onze da noite.", "Ana Paula"),
    _s("O imóvel foi avaliado em quatrocentos e oitenta mil reais."),
    _s("Ninguém quer trabalhar no feriado, isso é normal."),
    _s("A gente vai precisar de pelo menos duas semanas para isso."),
    _s("O depoimento do senhor Raimundo durou quase três horas.", "Raimundo"),
    _s("Não, ele não mora mais em Natal, mudou para João Pessoa.", "Natal", "João Pessoa"),
    _s("A vacina deve ser aplicada a cada seis meses."),
    _s("Eu nunca tinha ouvido falar desse programa."),
    _s("O índice de aprovação subiu para setenta e oito por cento."),
    _s("Quem chegou primeiro foi a Luíza, depois o Gustavo.", "Luíza", "Gustavo"),
    _s("Nem sempre dá para resolver tudo por telefone."),
    _s("A reunião de condomínio será no próximo sábado às dezesseis horas."),
    _s("O paciente nega tabagismo e nega etilismo."),
    _s("A conta de luz veio com cento e oitenta e sete reais e cinquenta centavos."),
    _s("Então, é, eu não lembro direito o que aconteceu."),
    _s("O Vasco perdeu por dois a zero no Maracanã.", "Vasco", "Maracanã"),
    _s("Nunca houve tanta gente na praia de Copacabana.", "Copacabana"),
    _s("A entrega vai atrasar, não tem jeito."),
    _s("Tenho trinta e quatro anos e trabalho como enfermeira em Teresina.", "Teresina"),
    _s("Ela não disse nem que sim nem que não."),
    _s("O décimo andar está interditado desde segunda-feira."),
    _s("A Petrobras anunciou um lucro de vinte bilhões de reais.", "Petrobras"),
    _s("Obrigado, obrigado a todos pela presença."),
    _s("Ninguém nunca me explicou como funciona esse sistema."),
    _s("O senhor José da Silva tem audiência marcada às dez e quarenta.", "José da Silva"),
    _s("A temperatura dele baixou para trinta e sete graus e meio."),
    _s("Não sei, não sei mesmo."),
    _s("O trem de São Paulo para o Rio de Janeiro ainda é só um projeto.", "São Paulo", "Rio de Janeiro"),
    _s("Um real e noventa centavos, é quanto custa o pão."),
    _s("Ela tirou nota nove na prova de matemática."),
    _s("Já falei que não vou, e pronto."),
    _s("Faltam só cinco minutos para o fim do prazo."),
    _s("Claro."),
    _s("A empresa existe desde mil novecentos e noventa e nove."),
    _s("A Gabriela Santos nunca perdeu um prazo.", "Gabriela Santos"),
    _s("Mariana, você pode fechar a porta, por favor?", "Mariana"),
    _s("Nada, ninguém ligou hoje."),
    _s("Ninguém, absolutamente ninguém, apareceu na reunião."),
    _s("Quarenta, quarenta e cinco reais, no máximo."),
    _s("Jamais."),
    _s("Fortaleza, Recife e Salvador tiveram muita chuva esta semana.", "Fortaleza", "Recife", "Salvador"),
    _s("Não, senhor, eu não estava lá."),
    _s("Beatriz, o relatório ficou para segunda.", "Beatriz"),
)
