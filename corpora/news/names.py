# ruff: noqa: RUF001, RUF002  (the dotless i of Turkish names is meant)
"""People's names of many origins, written here (own list, CC0): given names by sex and family
names, per origin. Names are facts; these lists were typed for this corpus, not copied from any
source. Letters beyond ASCII are kept as each language writes them (ø å ð þ ł ś ż ő ű ğ ş ı ă ț
ř ū ė ņ ɔ ɛ ọ, Vietnamese stacked accents), since a name the detector cannot read is a name
published.

Over 300 lines because it is one data table and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Origin:
    name: str
    given_f: tuple[str, ...]
    given_m: tuple[str, ...]
    family: tuple[str, ...]  # either sex
    family_f: tuple[str, ...] = ()  # family names written for a woman (Wiśniewska, Novotná)
    family_m: tuple[str, ...] = ()
    family_first: bool = False  # written "Family Given" (Chinese, Korean, Vietnamese)
    short_given: bool = False  # goes by the last given name alone (Vietnamese)


def _w(s: str) -> tuple[str, ...]:
    """Names one a line (a name may hold a space: "José Luis", "Ní Bhriain")."""
    return tuple(x.strip() for x in s.strip().splitlines() if x.strip())


def _s(s: str) -> tuple[str, ...]:
    return tuple(s.split())


ORIGINS: tuple[Origin, ...] = (
    Origin(
        "english",
        _s(
            "Amelia Charlotte Emily Sophie Eleanor Grace Hannah Lucy Abigail Rebecca Katherine "
            "Victoria Philippa Imogen Harriet Rosalind Beatrice Felicity Joanna Penelope"
        ),
        _s(
            "Oliver George Harry Jack Thomas William James Daniel Samuel Matthew Joseph Edward "
            "Henry Rupert Callum Nathaniel Gareth Simon Benedict Alistair"
        ),
        _s(
            "Whitfield Ashworth Pemberton Hargreaves Thornton Fairbairn Blackwood Cartwright "
            "Holloway Kingsley Marsden Rowntree Sutcliffe Fenwick Greenhalgh Attwood Bramley "
            "Catterall Dunmore Eastwood Foxley Gledhill Haworth Illingworth Kershaw Lockwood "
            "Mottram Northcott Ormerod Pickersgill Radcliffe Shackleton Tattersall Wainwright"
        ),
    ),
    Origin(
        "nordic",
        _s(
            "Sigríður Linnéa Åsa Ingrid Freyja Astrid Ragnhild Solveig Guðrún Mette Signe Tuva "
            "Ylva Þóra Aino Päivi Sunniva Maren Hildur Birgitta"
        ),
        _s(
            "Øystein Bjørn Magnús Sølve Torbjørn Kjetil Eirik Halldór Jørgen Søren Kåre Henrik "
            "Jóhann Jukka Ståle Håkon Ólafur Mikael Nils-Erik Tapani"
        ),
        _s(
            "Bråthen Åkesson Nilsen Haugland Sæther Løvås Kjærgaard Sørensen Bjørklund Lindqvist "
            "Ødegaard Grønlund Fjeldstad Thorsteinsson Hallgrímsson Mäkinen Järvinen Virtanen "
            "Lindström Engström Åberg Sjöberg Holmgren Rasmussen Kristiansen Bakke Strøm Dæhlie "
            "Møller Thorvaldsen Hyvönen Ekström Fløgstad Åsheim"
        ),
        _s("Jónsdóttir Guðmundsdóttir Sigurðardóttir"),
        _s("Þórðarson Einarsson Ragnarsson"),
    ),
    Origin(
        "baltic",
        _s(
            "Rūta Aušra Dovilė Eglė Ieva Līga Ilze Inese Zane Kadri Mari-Liis Kersti Elīna "
            "Gintarė Laima Kristīne Marju"
        ),
        _s(
            "Jurgis Mindaugas Žygimantas Vytautas Kęstutis Jānis Kārlis Māris Edgars Tõnu Jüri "
            "Rein Andris Šarūnas Raimonds Arvydas Priit"
        ),
        _s("Tamm Saar Sepp Mägi Kask Rebane Kõiv Ilves Pärn Lukšys Vėžys"),
        _s(
            "Petrauskienė Vaitkutė Kalniņa Liepiņa Zariņa Kazlauskienė Jankauskaitė Bērziņa "
            "Ozoliņa Krūmiņa"
        ),
        _s(
            "Kazlauskas Jankauskas Žukauskas Butkus Šimkus Bērziņš Ozoliņš Krūmiņš Grigonis "
            "Daukantas Kalniņš Liepiņš"
        ),
    ),
    Origin(
        "central_european",
        _s(
            "Małgorzata Zofia Agnieszka Kateřina Zuzana Petra Ágnes Zsófia Erzsébet Käthe "
            "Anneliese Franziska Dorota Mateja Jadwiga Ľudmila Réka Bożena"
        ),
        _s(
            "Jiří Łukasz Paweł Tomáš Ľubomír Matěj Gergő Bálint Ödön Jürgen Jörg Lukas "
            "Maximilian Grzegorz Žiga Przemysław Vojtěch Levente"
        ),
        _s(
            "Dvořák Kowalczyk Wójcik Krejčí Procházka Horváth Kovács Szabó Tóth Nagy Fehér "
            "Lőrincz Szőke Müller Schröder Weiß Groß Bäumer Köhler Krüger Hübner Kovačič "
            "Zupančič Horvat Babić Świątek Gąsior Ďurica Rácz Pető"
        ),
        _s("Wiśniewska Szymańska Novotná Dąbrowska Zielińska Nowakowska Černá Svobodová"),
        _s("Wiśniewski Szymański Novotný Dąbrowski Zieliński Nowakowski Černý Svoboda"),
    ),
    Origin(
        "turkish",
        _s(
            "Ayşe Şule Çağla Gülşen Büşra Elif Özlem Tuğba Derya Nazlı Ebru Zeynep İpek Gökçe "
            "Sıla Dilşad"
        ),
        _s(
            "Mehmet Gökhan Oğuz Ömer Emre İlkay Barış Cem Hakan Serkan Kerem Yiğit Uğur Çağrı "
            "Ilgaz Tolga"
        ),
        _s(
            "Yılmaz Öztürk Şahin Çelik Kaya Demir Aydın Arslan Doğan Kılıç Çetin Özdemir Koç "
            "Yıldız Güneş Karakuş Tekin Ünal Akgül Başaran Ekşi Sönmez Korkmaz Türkoğlu Gündoğdu"
        ),
    ),
    Origin(
        "romanian",
        _s(
            "Ioana Mihaela Alexandra Cristina Oana Roxana Elena Irina Ana-Maria Loredana Bianca "
            "Simona Teodora Ramona"
        ),
        _s(
            "Andrei Ștefan Răzvan Mihai Bogdan Radu Sorin Tudor Dragoș Cătălin Ionuț Florin "
            "Vlad Costin"
        ),
        _s(
            "Popescu Ionescu Țurcanu Dumitrescu Stănescu Constantinescu Munteanu Răducanu "
            "Georgescu Moldovan Ciobanu Lăzărescu Pîrvu Bălan Dobre Nistor Ștefănescu Vasilescu "
            "Mărgineanu Zăvoianu Tănase Iordache Cojocaru Oprea Enache Bîrsan Sârbu Vlăduț"
        ),
    ),
    Origin(
        "iberian",
        _w(
            """
            María
            Rocío
            Ximena
            Inés
            Begoña
            Conceição
            Leonor
            Nuria
            Martina
            Montserrat
            Lucía
            Beatriz
            Mónica
            Fátima
            Pilar
            Sofía
            María José
            Ana Luísa
            """
        ),
        _w(
            """
            José Luis
            Joaquín
            Íñigo
            João
            Gonçalo
            Álvaro
            Sebastián
            Jordi
            Tomás
            Andrés
            Raúl
            Mateus
            Ramón
            Adrián
            Juan Pablo
            Xavier
            Sergi
            """
        ),
        _w(
            """
            García
            Fernández
            Castañeda
            Ibáñez
            Muñoz
            Rodríguez
            Gonçalves
            Sánchez
            Peña
            Álvarez
            Gutiérrez
            Núñez
            Cañizares
            Guimarães
            Magalhães
            Vilanova
            Ferrer
            Domínguez
            Echeverría
            Arrieta
            Sepúlveda
            Zúñiga
            Carvalho
            Nogueira
            Araújo
            Figueiredo
            Villalobos
            de la Fuente
            Pérez Ollero
            Brañas
            Quiñones
            Montoya
            """
        ),
    ),
    Origin(
        "irish_welsh",
        _s(
            "Siobhán Aoife Niamh Caoimhe Róisín Saoirse Gráinne Éabha Siân Gwenllian Angharad "
            "Llinos Bethan Cerys Eilidh Mhairi Fionnuala Nia"
        ),
        _s(
            "Oisín Ciarán Seán Pádraig Eoghan Dáithí Tadhg Rhys Dafydd Iolo Emyr Gethin "
            "Ruaridh Cathal Lorcan Rhodri"
        ),
        _w(
            """
            O'Sullivan
            O'Donoghue
            McLaughlin
            Fitzgerald
            Ó Súilleabháin
            Ó Dónaill
            Breathnach
            Ó Sé
            Mac Giolla
            Kavanagh
            Ó Riordáin
            Cadwaladr
            ap Gwilym
            Pritchard
            Llewellyn
            Prys
            Griffiths
            Rhydderch
            MacLeod
            MacAulay
            Quigley
            Ó Muircheartaigh
            Mac Cárthaigh
            Ní Bhriain
            Nic Giolla
            """
        ),
    ),
    Origin(
        "west_african",
        _w(
            """
            Adaeze
            Chiamaka
            Folasade
            Ngozi
            Abena
            Ama
            Efua
            Amara
            Ifeoluwa
            Aminata
            Fatou
            Mariama
            Awa
            Akosua
            Tọ́pẹ́
            Ɛsi
            Yéwándé
            Nana Ama
            """
        ),
        _w(
            """
            Oluwaseun
            Kwabena
            Chukwuemeka
            Kofi
            Yaw
            Kwame
            Nnamdi
            Babajide
            Moussa
            Ousmane
            Ibrahima
            Abdoulaye
            Adébáyọ̀
            Ọlámídé
            Kɔfi
            Femi
            Sékou
            """
        ),
        _w(
            """
            Okafor
            Adeyemi
            Mensah
            Nwosu
            Boateng
            Asante
            Owusu
            Oyelaran
            Ogunleye
            Ọlátúnjí
            Adéwálé
            Ògúndélé
            Ɔpɔku
            Diallo
            Ndiaye
            Diop
            Traoré
            Keïta
            Ouédraogo
            Sawadogo
            Coulibaly
            Okonkwo
            Eze
            Abubakar
            Danjuma
            Balogun
            Mensah-Boateng
            Agyɛman
            Nwachukwu
            Ezeoke
            """
        ),
    ),
    Origin(
        "east_african",
        _s(
            "Wanjiru Achieng Njeri Zawadi Neema Tigist Meseret Selam Hirut Chebet Wambui Halima "
            "Rehema Nyokabi Fantaye Aheza"
        ),
        _s(
            "Amani Baraka Abebe Yohannes Dawit Kiprono Juma Faraji Tesfahun Kibet Mwangaza "
            "Habtamu Ssenyonga Rukundo"
        ),
        _s(
            "Kamau Otieno Wanjiku Kiprop Chepngetich Kiplagat Mwangi Ochieng Odhiambo Njoroge "
            "Gebremariam Tesfaye Bekele Alemu Girma Kebede Mekonnen Wolde Nakato Nalubega "
            "Ssempijja Mugisha Byaruhanga Habimana Uwimana Mbwambo Massawe Jepkosgei"
        ),
    ),
    Origin(
        "south_asian",
        _s(
            "Priyanka Ananya Kavya Meera Nandini Sunita Harpreet Lakshmi Thilini Sanjana Nusrat "
            "Tahmina Pooja Shreya Ayesha Dilani"
        ),
        _s(
            "Arjun Farhan Vikram Rohan Siddharth Aditya Rahul Gurdeep Chathura Nimal Imran Kiran "
            "Deepak Ravindra Anil Tanvir"
        ),
        _w(
            """
            Raghunathan
            Venkataraman
            Chowdhury
            D'Souza
            Iyer
            Banerjee
            Chatterjee
            Mukherjee
            Deshpande
            Kulkarni
            Reddy
            Nair
            Pillai
            Menon
            Sharma
            Gupta
            Bhattacharya
            Rahman
            Hossain
            Siddiqui
            Qureshi
            Jayawardena
            Perera
            Wickramasinghe
            Sandhu
            Dhillon
            Thapa
            Gurung
            Shrestha
            Ranasinghe
            """
        ),
    ),
    Origin(
        "chinese",
        _s("Xiaomei Yuxin Jiahui Lihua Ruoxi Yutong Meiling Xinyi Shuang Wanqing"),
        _s("Wei Xiaoming Haoran Zihao Jianguo Yifan Junjie Tianyu Hongwei Zhiqiang"),
        _s("Zhang Wang Liu Chen Yang Huang Zhao Zhou Xu Sun Guo Lin Gao Luo Zheng Xie Tang"),
        family_first=True,
    ),
    Origin(
        "korean",
        _s("Ji-woo Seo-yeon Ha-eun Min-seo Soo-ah Ye-jin Da-eun Yu-na"),
        _s("Min-jun Do-hyun Seo-jun Ji-hoon Hyun-woo Jae-sung Tae-yang Woo-jin"),
        _s("Park Choi Jung Kang Yoon Jang Lim Han Shin Seo Kwon Hwang Ahn Baek"),
        family_first=True,
    ),
    Origin(
        "vietnamese",
        _w(
            """
            Thị Hương
            Thu Trang
            Ngọc Ánh
            Thanh Hà
            Thị Mỹ Linh
            Phương Thảo
            Bích Ngọc
            Thùy Dương
            """
        ),
        _w(
            """
            Văn Đức
            Minh Tuấn
            Quốc Bảo
            Hoàng Long
            Đức Thắng
            Văn Hải
            Quang Huy
            Tiến Dũng
            """
        ),
        _s("Nguyễn Trần Lê Phạm Hoàng Vũ Đặng Bùi Đỗ Hồ Ngô Dương Lý Huỳnh Võ Trịnh"),
        family_first=True,
        short_given=True,
    ),
    Origin(
        "japanese",
        _s("Yui Sakura Haruka Aoi Mei Rina Nanami Yuka Emiko Ayaka"),
        _s("Haruto Ren Sota Yuto Kenji Hiroshi Takumi Daiki Shun Kaito"),
        _s(
            "Sakamoto Takahashi Tanaka Watanabe Yamamoto Nakamura Kobayashi Yoshida Yamaguchi "
            "Matsumoto Inoue Kimura Hayashi Shimizu Ishikawa Fujiwara Ōtani Saitō"
        ),
    ),
    Origin(
        "arabic",
        _s(
            "Layla Fatima Noor Mariam Rania Huda Yasmin Leila Salma Dina Amira Nadia Lubna "
            "Sanaa Ghada Rim"
        ),
        _s(
            "Yousef Omar Khalid Hassan Tariq Karim Samir Ahmad Mahmoud Ziad Faisal Bilal Walid "
            "Nabil Hisham Anas"
        ),
        _w(
            """
            Al-Masri
            Haddad
            Abdelrahman
            El-Sayed
            Al-Hashimi
            Khoury
            Nasser
            Saleh
            Mansour
            Farouk
            Al-Qahtani
            Ben Youssef
            Benali
            Chaouki
            Abdallah
            Hamdan
            Darwish
            Al-Amin
            Rahal
            Tahir
            Suleiman
            Ghanem
            Jaber
            El Idrissi
            Bennani
            Al-Shamsi
            """
        ),
    ),
    Origin(
        "french",
        _s("Élodie Gaëlle Cécile Amélie Maëlle Chloé Noémie Solène Hélène Ségolène Capucine Anaïs"),
        _s("François Hervé Jérôme Benoît Loïc Théo Raphaël Gaëtan Jean-Noël Anatole Stéphane"),
        _s(
            "Lefèvre Bérenger Dupré Rousseau Mercier Lemaître Gauthier Duchêne Régnier Faure "
            "Leroux Marchand Besnard Thibault Légaré Courtois Pelletier Chevalier"
        ),
    ),
    Origin(
        "italian",
        _s("Giulia Chiara Francesca Federica Alessia Benedetta Ilaria Martina Serena"),
        _s("Lorenzo Matteo Niccolò Gianluca Davide Tommaso Pierluigi Gabriele Vittorio"),
        _w(
            """
            Esposito
            Romano
            Colombo
            Ricci
            Marino
            Greco
            De Luca
            Mancini
            Lombardi
            Fabbri
            Caruso
            Galli
            Bianchi
            Ferraro
            Santoro
            D'Amico
            Lo Russo
            """
        ),
    ),
    Origin(
        "dutch",
        _s("Sanne Femke Maaike Lieke Anouk Marloes Ilse Fenna"),
        _s("Joris Bram Thijs Daan Sjoerd Wouter Ruud Teun"),
        _w(
            """
            van Dijk
            de Vries
            Bakker
            Janssen
            Visser
            Smit
            Meijer
            van den Berg
            Mulder
            de Groot
            Hendriks
            van Leeuwen
            Kuipers
            Verhoeven
            IJzerman
            """
        ),
    ),
    Origin(
        "slavic",
        _s("Oksana Natalia Yulia Jelena Ivana Vesna Tetiana Milica Svetlana Daria"),
        _s("Dmitri Bohdan Aleksandr Miloš Nikola Goran Taras Dušan Vladimir Yaroslav"),
        _s(
            "Kovalenko Shevchuk Petrović Jovanović Bondarenko Marković Nikolić Tkachenko "
            "Melnyk Kravchuk Đorđević Stojanović Lysenko Savchenko"
        ),
        _s("Volkova Ivanova Sokolova Kuznetsova"),
        _s("Volkov Ivanov Sokolov Kuznetsov"),
    ),
    Origin(
        "greek",
        _s("Eleni Dimitra Sofia Katerina Vasiliki Despina Georgia Chrysa"),
        _s("Giorgos Konstantinos Nikos Yannis Christos Stavros Thanasis Spyros"),
        _s(
            "Papadopoulos Georgiou Nikolaidis Karagiannis Vlachos Oikonomou Papadakis "
            "Christodoulou Antoniou Makris Alexiou Triantafyllou"
        ),
    ),
)
